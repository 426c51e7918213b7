// Which names count as local (only this machine or a private network reaches them): they drive
// the start-up warning and the dashboard's banner (test/dashboard/getting-started.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLocalName, localNamesWarning, localRecordHosts } from '../../src/platform/local-names.ts';
import { loadConfig } from '../../src/config.ts';

test('localhost, *.localhost, *.local, reserved test names, loopback and private addresses and dotless names are local', () => {
  for (const name of [
    'localhost',
    'app.localhost',
    'postlane.local',
    'mail.postlane.test',
    'x.example',
    'x.invalid',
    'db.internal',
    '127.0.0.1',
    '127.1.2.3',
    '::1',
    '[::1]',
    '10.0.0.5',
    '192.168.1.2',
    '172.20.0.1',
    'mailhost',
    'LOCALHOST.',
  ]) {
    assert.equal(isLocalName(name), true, name);
  }
  for (const name of ['mail.example.com', 'postlane.io', '203.0.113.9', '172.32.0.1', '2001:db8::1', 'localhost.example.com']) {
    assert.equal(isLocalName(name), false, name);
  }
});

test('the warning names each local setting and what to set; the record hosts follow MAIL_HOSTNAME unless set apart', () => {
  const config = loadConfig({
    PUBLIC_URL: 'https://mail.example.com',
    MAIL_HOSTNAME: 'localhost',
    RETURN_PATH_HOST: 'bounces.example.com',
  });
  assert.match(localNamesWarning(config)!, /^MAIL_HOSTNAME=localhost is a local name: .* Set MAIL_HOSTNAME to this server's public name/);
  assert.deepEqual(localRecordHosts(config), ['_spf.localhost', 'track.localhost', 'inbound.localhost']);
  assert.equal(localNamesWarning(loadConfig({ PUBLIC_URL: 'https://mail.example.com', MAIL_HOSTNAME: 'mail.example.com' })), null);
});
