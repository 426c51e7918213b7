// Secrets the service must read back (DKIM private keys, webhook secrets) are sealed at rest
// with AES-256-GCM. The key comes from ENCRYPTION_KEY (64 hex characters), or from
// DATA_DIR/encryption.key, created with mode 0600 at first start. Several servers on one
// PostgreSQL must share the same ENCRYPTION_KEY.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

const PREFIX = 'v1:';

export function loadEncryptionKey(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv && fromEnv.trim() !== '') {
    if (!/^[0-9a-fA-F]{64}$/.test(fromEnv.trim())) throw new Error('ENCRYPTION_KEY must be 64 hexadecimal characters');
    return Buffer.from(fromEnv.trim(), 'hex');
  }
  const file = join(dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

export function createSealer(key: Buffer): Sealer {
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    open(sealed) {
      if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed value');
      const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
