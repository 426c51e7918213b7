// mailauth's MTA-STS module without the rest of mailauth. Its one import from mailauth,
// ./tools, loads joi, libmime, tldts and more (about 6 MB of heap in every delivering
// process) for two small helpers: these are given here, written to behave as mailauth
// 7.1.0's do. A helper a later mailauth asks for and this file lacks comes from the real
// ./tools, so an upgrade costs memory, never correctness.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { compileFunction } from 'node:vm';

export type MtaStsModule = typeof import('mailauth/lib/mta-sts.js');

const NON_ASCII = /[^\x00-\x7f]/;

export function loadMtaSts(): MtaStsModule {
  const file = createRequire(import.meta.url).resolve('mailauth/lib/mta-sts.js');
  const fileRequire = createRequire(file);
  const punycode = fileRequire('punycode.js') as { toASCII(label: string): string };
  const helpers: Record<string | symbol, unknown> = {
    toALabel(domain: unknown): string {
      const name = (domain || '').toString();
      if (!NON_ASCII.test(name)) return name;
      return name
        .split('.')
        .map((label) => {
          if (!NON_ASCII.test(label)) return label;
          try {
            return punycode.toASCII(label.normalize('NFC').toLowerCase());
          } catch {
            return label;
          }
        })
        .join('.');
    },
    createError(message: string, code: string, extra?: object): Error {
      const error = Object.assign(new Error(message), { code });
      return extra ? Object.assign(error, extra) : error;
    },
  };
  const tools = new Proxy(helpers, {
    get: (target, key) => (key in target ? target[key] : (fileRequire('./tools') as Record<string | symbol, unknown>)[key]),
  });
  const ownRequire = Object.assign((id: string) => (id === './tools' ? tools : fileRequire(id)), fileRequire);
  const module = { exports: {} as MtaStsModule };
  const body = compileFunction(readFileSync(file, 'utf8'), ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
  body(module.exports, ownRequire, module, file, dirname(file));
  return module.exports;
}
