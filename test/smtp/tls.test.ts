// The SMTP listeners' certificate: generated once into DATA_DIR, reused, remade for a new host
// name, or taken from SMTP_TLS_CERT / SMTP_TLS_KEY (a key that belongs to that certificate).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { createSelfSignedCertificate, GENERATED_FILE, loadTlsMaterial, TlsConfigError } from '../../src/smtp/tls.ts';

function withDir(run: (dir: string) => void | Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'postlane-tls-'));
    try {
      await run(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const config = (dataDir: string, extra: { smtpTlsCert?: string | null; smtpTlsKey?: string | null; mailHostname?: string } = {}) => ({
  dataDir,
  mailHostname: extra.mailHostname ?? 'mx.example.test',
  smtpTlsCert: extra.smtpTlsCert ?? null,
  smtpTlsKey: extra.smtpTlsKey ?? null,
});

test('a generated certificate is a valid self-signed v3 server certificate that TLS clients can verify', async () => {
  const { key, cert } = createSelfSignedCertificate(['mx.example.test', 'localhost']);
  const x509 = new X509Certificate(cert);
  assert.equal(x509.subject, 'CN=mx.example.test');
  assert.equal(x509.subjectAltName, 'DNS:mx.example.test, DNS:localhost');
  assert.ok(x509.verify(x509.publicKey), 'self-signed');
  assert.equal(x509.ca, false);
  assert.ok(new Date(x509.validTo).getTime() > Date.now() + 3000 * 24 * 3600 * 1000);
  const server = createServer({ key, cert }, (socket) => socket.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const reply = await new Promise<string>((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', servername: 'mx.example.test', ca: cert }, () =>
      socket.once('data', (d) => resolve(String(d))),
    );
    socket.on('error', reject);
  });
  server.close();
  assert.equal(reply, 'ok');
});

test(
  'first start writes DATA_DIR/smtp-tls.pem (mode 0600); later starts reuse it; a new MAIL_HOSTNAME remakes it',
  withDir((dir) => {
    const first = loadTlsMaterial(config(dir));
    assert.equal(first.source, 'generated');
    assert.equal(statSync(join(dir, GENERATED_FILE)).mode & 0o777, 0o600);
    const again = loadTlsMaterial(config(dir));
    assert.equal(again.cert, first.cert);
    assert.equal(again.key.trim(), first.key.trim());
    const renamed = loadTlsMaterial(config(dir, { mailHostname: 'smtp.other.test' }));
    assert.notEqual(renamed.cert, first.cert);
    assert.ok(new X509Certificate(renamed.cert).checkHost('smtp.other.test'));
  }),
);

test(
  'SMTP_TLS_CERT and SMTP_TLS_KEY: files or PEM text, both or neither, and usable',
  withDir((dir) => {
    const made = createSelfSignedCertificate(['given.example.test']);
    writeFileSync(join(dir, 'cert.pem'), made.cert);
    writeFileSync(join(dir, 'key.pem'), made.key);
    const fromFiles = loadTlsMaterial(config(dir, { smtpTlsCert: join(dir, 'cert.pem'), smtpTlsKey: join(dir, 'key.pem') }));
    assert.deepEqual(fromFiles, {
      key: made.key,
      cert: made.cert,
      source: 'configured',
      files: { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') },
    });
    const fromText = loadTlsMaterial(config(dir, { smtpTlsCert: made.cert, smtpTlsKey: made.key }));
    assert.equal(fromText.cert, made.cert);
    assert.equal(fromText.files, null, 'PEM text has no files to watch');
    assert.throws(() => loadTlsMaterial(config(dir, { smtpTlsCert: join(dir, 'cert.pem') })), {
      message: 'SMTP_TLS_CERT and SMTP_TLS_KEY must be set together',
    });
    assert.throws(
      () => loadTlsMaterial(config(dir, { smtpTlsCert: join(dir, 'missing.pem'), smtpTlsKey: join(dir, 'key.pem') })),
      (error: Error) => error instanceof TlsConfigError && /SMTP_TLS_CERT: cannot read/.test(error.message),
    );
    assert.throws(
      () => loadTlsMaterial(config(dir, { smtpTlsCert: join(dir, 'key.pem'), smtpTlsKey: join(dir, 'key.pem') })),
      /not a usable PEM key and certificate/,
    );
    writeFileSync(join(dir, 'other-key.pem'), createSelfSignedCertificate(['other.example.test']).key);
    assert.throws(
      () => loadTlsMaterial(config(dir, { smtpTlsCert: join(dir, 'cert.pem'), smtpTlsKey: join(dir, 'other-key.pem') })),
      (error: Error) => error instanceof TlsConfigError && error.message === 'SMTP_TLS_KEY does not match the certificate in SMTP_TLS_CERT',
    );
  }),
);
