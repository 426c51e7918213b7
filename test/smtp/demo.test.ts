// `postlane demo` as a user runs it: a child process, on loopback, that must exit 0 in
// bounded time after both emails were delivered DKIM-signed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The demo must not depend on the caller's configuration: hand it a hostile one.
    const child = spawn(process.execPath, [join(root, 'src', 'main.ts'), ...args], {
      env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', DNS_SERVERS: '127.0.0.1:1', HTTP_PORT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('postlane demo delivers an API and an SMTP email DKIM-signed, prints headers and events, exits 0', async () => {
  const { code, stdout, stderr } = await run(['demo', '--json'], 90_000);
  assert.equal(code, 0, `exit ${code}\n${stderr}\n${stdout}`);
  const report = JSON.parse(stdout);
  assert.equal(report.domain.name, 'demo.test');
  assert.ok(report.domain.verified_at);
  assert.deepEqual(
    report.emails.map((e: any) => e.status),
    ['delivered', 'delivered'],
  );
  assert.equal(report.messages.length, 2);
  for (const message of report.messages) {
    assert.match(message.headers, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=demo\.test;/m);
    assert.deepEqual(message.dkim, { result: 'pass', domain: 'demo.test', selector: 'postlane' });
    assert.match(message.envelope.mail_from, /^b\+em_/);
  }
  const subjects = report.messages.map((m: any) => /^Subject: (.*)$/m.exec(m.headers)?.[1]).sort();
  assert.deepEqual(subjects, ['Hello from the Postlane API', 'Hello from the Postlane SMTP relay']);
  assert.match(
    report.messages.find((m: any) => /API/.test(m.headers)).headers,
    /Content-Type: multipart\/mixed/,
    'the API email carries its attachment',
  );
  const types = report.events.map((e: any) => e.type);
  assert.deepEqual(types.filter((t: string) => t.startsWith('email.')).sort(), ['email.accepted', 'email.delivered', 'email.delivered']);
  assert.ok(types.includes('domain.created'));
});

test('postlane demo without --json prints the story in readable text', async () => {
  const { code, stdout, stderr } = await run(['demo'], 90_000);
  assert.equal(code, 0, `exit ${code}\n${stderr}\n${stdout}`);
  assert.match(stdout, /Sent over SMTP: +em_\w+ +\(server said "250 2\.0\.0 OK: queued as em_\w+"\)/);
  assert.match(stdout, /--- DKIM: pass \(d=demo\.test, s=postlane\)/);
  assert.match(stdout, /email\.delivered/);
});
