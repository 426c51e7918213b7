// Pure rules of the domains resource: names, labels, record judgments, the verification
// state machine, DKIM key comparison and RDAP parsing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { checkApexName, checkLabel } from '../../src/resources/domains/names.ts';
import {
  judgeDkim,
  judgeDmarc,
  judgeInbound,
  judgeReturnPath,
  judgeSpf,
  judgeTracking,
  describeLookupFailure,
  type CheckResults,
  type RecordCheck,
} from '../../src/resources/domains/checks.ts';
import { dkimRecordValue, generateDkimKey, sameRsaKey, parseTags } from '../../src/resources/domains/dkim.ts';
import { applyCheck, CHECK_INTERVAL_MS, RETRY_INTERVAL_MS, stateChanged } from '../../src/resources/domains/verification.ts';
import { registrationFrom } from '../../src/resources/domains/rdap.ts';
import type { DomainRow } from '../../src/resources/domains/objects.ts';

test('domain names: only a registrable apex under an ICANN suffix, lowercase ASCII', () => {
  assert.deepEqual(checkApexName('example.com'), { ok: true, name: 'example.com' });
  assert.deepEqual(checkApexName('  Example.COM '), { ok: true, name: 'example.com' });
  assert.deepEqual(checkApexName('example.com.'), { ok: true, name: 'example.com' });
  assert.deepEqual(checkApexName('example.co.uk'), { ok: true, name: 'example.co.uk' });
  assert.deepEqual(checkApexName('münchen.de'), { ok: true, name: 'xn--mnchen-3ya.de' });
  // A huge name is quoted by its start in the reason, not whole.
  assert.deepEqual(checkApexName('x'.repeat(300_000)), {
    ok: false,
    error: `"${'x'.repeat(100)}… (300,000 characters)" is not a valid domain name`,
  });
  // The reserved testing names (RFC 2606 / 6761) work like a public suffix, for labs and demos.
  assert.deepEqual(checkApexName('acme.test'), { ok: true, name: 'acme.test' });
  assert.deepEqual(checkApexName('Docs.Example'), { ok: true, name: 'docs.example' });
  const refused: Array<[string, RegExp]> = [
    ['https://example.com', /scheme/],
    ['http://www.example.com/path', /scheme.*example\.com/],
    ['www.example.com', /www\..*example\.com/],
    ['mail.example.com', /not an apex domain.*example\.com/],
    ['a.b.example.co.uk', /not an apex domain.*example\.co\.uk/],
    ['co.uk', /public suffix/],
    ['com', /public suffix/],
    ['example.notatld', /public suffix/],
    ['localhost', /public suffix/],
    ['example.local', /public suffix/],
    ['test', /public suffix/],
    ['mail.acme.test', /not an apex domain.*acme\.test/],
    ['1.2.3.4', /IP address/],
    ['example.com/path', /bare domain/],
    ['example.com:25', /bare domain/],
    ['user@example.com', /bare domain/],
    ['exa_mple.com', /not a valid domain/],
    ['-example.com', /not a valid domain/],
    [`${'a'.repeat(64)}.com`, /not a valid domain/],
    ['', /required/],
  ];
  for (const [input, reason] of refused) {
    const result = checkApexName(input);
    assert.equal(result.ok, false, input);
    assert.match((result as { error: string }).error, reason, input);
  }
});

test('tracking and inbound keys: one DNS label, null means the default', () => {
  assert.deepEqual(checkLabel('tracking_key', undefined), { ok: true, label: null });
  assert.deepEqual(checkLabel('tracking_key', null), { ok: true, label: null });
  assert.deepEqual(checkLabel('tracking_key', 'Links-2'), { ok: true, label: 'links-2' });
  for (const bad of ['', 'a.b', '-x', 'x-', 'with space', 'under_score', 'a'.repeat(64)]) {
    assert.equal(checkLabel('inbound_key', bad).ok, false, bad);
  }
});

const found = <T>(...values: T[]) => ({ kind: 'found' as const, values });
const none = { kind: 'none' as const };
const failed = { kind: 'failed' as const, message: 'DNS lookup of TXT x timed out; the record could not be checked, try again later' };

test('SPF: exactly one v=spf1 record that includes the SPF host', () => {
  const judge = (r: Parameters<typeof judgeSpf>[0]) => judgeSpf(r, 'postlane.example.com', '_spf.postlane.test');
  assert.deepEqual(judge(found('v=spf1 include:_spf.postlane.test ~all')), { outcome: 'ok', error: null });
  assert.deepEqual(judge(found('v=spf1 a mx +include:_SPF.postlane.test. -all', 'google-site-verification=x')), {
    outcome: 'ok',
    error: null,
  });
  assert.deepEqual(judge(none), { outcome: 'missing', error: 'No SPF record (TXT starting with v=spf1) found at postlane.example.com' });
  assert.equal(judge(found('some-other-token')).outcome, 'missing');
  assert.deepEqual(judge(found('v=spf1 include:_spf.other.test ~all')), {
    outcome: 'invalid',
    error: 'The SPF record at postlane.example.com does not include include:_spf.postlane.test',
  });
  assert.equal(judge(found('v=spf1 include:_spf.postlane.test.evil.test ~all')).outcome, 'invalid');
  assert.match(judge(found('v=spf1 include:_spf.postlane.test ~all', 'v=spf1 -all')).error!, /Found 2 SPF records/);
  assert.deepEqual(judge(failed), { outcome: 'unknown', error: failed.message });
});

test("DKIM: the published p= must be this domain's key, compared as a key", async () => {
  const ours = await generateDkimKey();
  const other = await generateDkimKey();
  const judge = (r: Parameters<typeof judgeDkim>[0]) => judgeDkim(r, 'postlane._domainkey.example.com', ours.publicKeyBase64);
  assert.deepEqual(judge(found(dkimRecordValue(ours.publicKeyBase64))), { outcome: 'ok', error: null });
  // Tags in any order, whitespace inside p= (some DNS panels wrap it), no v= tag.
  const wrapped = ours.publicKeyBase64.replace(/(.{64})/g, '$1 ');
  assert.equal(judge(found(`k=rsa; p=${wrapped}`)).outcome, 'ok');
  // The same key as a bare PKCS#1 RSAPublicKey is the same key.
  const pkcs1 = (await import('node:crypto'))
    .createPublicKey({ key: Buffer.from(ours.publicKeyBase64, 'base64'), format: 'der', type: 'spki' })
    .export({ format: 'der', type: 'pkcs1' })
    .toString('base64');
  assert.equal(judge(found(`v=DKIM1; p=${pkcs1}`)).outcome, 'ok');
  assert.deepEqual(judge(found(dkimRecordValue(other.publicKeyBase64))), {
    outcome: 'invalid',
    error: "The public key (p=) of the DKIM record at postlane._domainkey.example.com does not match this domain's DKIM key",
  });
  assert.match(judge(found('v=DKIM1; p=')).error!, /empty p=/);
  assert.match(judge(found('v=DKIM1; p=bm90IGEga2V5')).error!, /not a valid public key/);
  assert.match(judge(found(`v=DKIM1; k=ed25519; p=${ours.publicKeyBase64}`)).error!, /k=ed25519/);
  assert.match(judge(found(dkimRecordValue(ours.publicKeyBase64), dkimRecordValue(other.publicKeyBase64))).error!, /Found 2 DKIM records/);
  assert.deepEqual(judge(none), { outcome: 'missing', error: 'No DKIM record found at postlane._domainkey.example.com' });
  assert.equal(judge(found('unrelated text')).outcome, 'missing');
  assert.equal(judge(failed).outcome, 'unknown');
  assert.equal(sameRsaKey(ours.publicKeyBase64, ours.publicKeyBase64), true);
  assert.equal(sameRsaKey(other.publicKeyBase64, ours.publicKeyBase64), false);
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  assert.equal(sameRsaKey(ec, ours.publicKeyBase64), false);
  assert.deepEqual(
    [...parseTags('v=DKIM1; t=s; h=sha256; p=abc')],
    [
      ['v', 'DKIM1'],
      ['t', 's'],
      ['h', 'sha256'],
      ['p', 'abc'],
    ],
  );
});

test('return path: exactly one MX, pointing to the return-path host', () => {
  const judge = (r: Parameters<typeof judgeReturnPath>[0]) => judgeReturnPath(r, 'postlane.example.com', 'bounces.postlane.test');
  assert.deepEqual(judge(found({ exchange: 'bounces.postlane.test', priority: 10 })), { outcome: 'ok', error: null });
  assert.equal(judge(found({ exchange: 'BOUNCES.postlane.test.', priority: 5 })).outcome, 'ok');
  assert.deepEqual(judge(none), { outcome: 'missing', error: 'No MX record found at postlane.example.com' });
  assert.deepEqual(judge(found({ exchange: 'mx.other.test', priority: 10 })), {
    outcome: 'invalid',
    error: 'The MX record at postlane.example.com points to mx.other.test instead of bounces.postlane.test',
  });
  assert.deepEqual(judge(found({ exchange: 'bounces.postlane.test', priority: 10 }, { exchange: 'mx.other.test', priority: 20 })), {
    outcome: 'invalid',
    error: 'Found 2 MX records at postlane.example.com; exactly one, pointing to bounces.postlane.test, is required',
  });
  assert.equal(judge(failed).outcome, 'unknown');
});

test('DMARC: one v=DMARC1 record with a policy; with reports on, rua must reach us', () => {
  const judge = (r: Parameters<typeof judgeDmarc>[0], address: string | null = null) => judgeDmarc(r, '_dmarc.example.com', address);
  assert.deepEqual(judge(found('v=DMARC1; p=none;')), { outcome: 'ok', error: null });
  assert.equal(judge(found('v=DMARC1; p=reject; rua=mailto:a@b.test')).outcome, 'ok');
  assert.deepEqual(judge(none), { outcome: 'missing', error: 'No DMARC record (TXT starting with v=DMARC1) found at _dmarc.example.com' });
  assert.match(judge(found('v=DMARC1; p=sometimes')).error!, /no valid policy/);
  assert.match(judge(found('v=DMARC1; p=none', 'v=DMARC1; p=reject')).error!, /Found 2 DMARC records/);
  const address = 'dmarc-abc@postlane.test';
  assert.equal(judge(found(`v=DMARC1; p=none; rua=mailto:x@y.test,mailto:${address}!10m; ruf=mailto:${address};`), address).outcome, 'ok');
  assert.match(judge(found('v=DMARC1; p=none;'), address).error!, /does not send aggregate reports to mailto:dmarc-abc@postlane\.test/);
  assert.equal(judge(failed).outcome, 'unknown');
});

test('tracking CNAME and inbound MX', () => {
  assert.equal(judgeTracking(found('track.postlane.test'), 'go.example.com', 'track.postlane.test').outcome, 'ok');
  assert.deepEqual(judgeTracking(found('elsewhere.test'), 'go.example.com', 'track.postlane.test'), {
    outcome: 'invalid',
    error: 'The CNAME record at go.example.com points to elsewhere.test instead of track.postlane.test',
  });
  assert.equal(judgeTracking(none, 'go.example.com', 'track.postlane.test').outcome, 'missing');
  const mx = (exchange: string) => ({ exchange, priority: 10 });
  assert.equal(judgeInbound(found(mx('inbound.postlane.test')), 'inbound.example.com', 'inbound.postlane.test').outcome, 'ok');
  assert.equal(
    judgeInbound(found(mx('inbound.postlane.test'), mx('mx.other.test')), 'inbound.example.com', 'inbound.postlane.test').outcome,
    'invalid',
  );
  assert.equal(judgeInbound(none, 'inbound.example.com', 'inbound.postlane.test').outcome, 'missing');
});

test('lookup failures read as sentences', () => {
  assert.equal(
    describeLookupFailure({ code: 'ETIMEOUT' }, 'TXT', 'postlane.example.com'),
    'DNS lookup of TXT postlane.example.com timed out; the record could not be checked, try again later',
  );
  assert.match(describeLookupFailure({ code: 'ESERVFAIL' }, 'MX', 'x'), /SERVFAIL/);
  assert.match(describeLookupFailure(new Error('boom'), 'MX', 'x'), /failed \(unknown error\)/);
});

function row(overrides: Partial<DomainRow> = {}): DomainRow {
  return {
    id: 'dom_x',
    workspace_id: 'wsp_x',
    name: 'example.com',
    verification_status: 'pending',
    verified_at: null,
    manual_review_required: 0,
    manually_verified_at: null,
    dns_checked_at: null,
    next_check_at: 0,
    registered_at: null,
    spf_status: 'pending',
    spf_error: null,
    dkim_status: 'pending',
    dkim_error: null,
    return_path_status: 'pending',
    return_path_error: null,
    dmarc_status: 'pending',
    dmarc_error: null,
    tracking_status: 'pending',
    tracking_error: null,
    inbound_status: 'pending',
    inbound_error: null,
    tracking_key: null,
    inbound_key: null,
    track_loads: 0,
    track_clicks: 0,
    dmarc_reports: 0,
    dmarc_address: 'd@x',
    verification_token: 't',
    dkim_selector: 'postlane',
    dkim_public_key: 'k',
    dkim_private_key: 's',
    created_at: 'c',
    updated_at: 'u',
    ...overrides,
  };
}

const OK: RecordCheck = { outcome: 'ok', error: null };
function results(overrides: Partial<CheckResults> = {}): CheckResults {
  return { spf: OK, dkim: OK, return_path: OK, dmarc: OK, tracking: OK, inbound: OK, ...overrides };
}
const AT = Date.parse('2026-11-22T10:00:00Z');
const AT_ISO = '2026-11-22T10:00:00.000000Z';

test('verification: the three required records pass → verified at this check', () => {
  const changes = applyCheck(row(), results({ dmarc: { outcome: 'missing', error: 'no' } }), 'not_needed', AT);
  assert.equal(changes.verification_status, 'verified');
  assert.equal(changes.verified_at, AT_ISO);
  assert.equal(changes.dns_checked_at, AT_ISO);
  assert.equal(changes.dmarc_status, 'missing');
  assert.equal(changes.next_check_at, AT + CHECK_INTERVAL_MS);
});

test('verification: a failing required record clears verified_at', () => {
  for (const key of ['spf', 'dkim', 'return_path'] as const) {
    for (const outcome of ['missing', 'invalid'] as const) {
      const changes = applyCheck(
        row({ verification_status: 'verified', verified_at: 'earlier' }),
        results({ [key]: { outcome, error: 'x' } }),
        'not_needed',
        AT,
      );
      assert.equal(changes.verification_status, 'pending', `${key} ${outcome}`);
      assert.equal(changes.verified_at, null);
      assert.equal(changes[`${key}_status`], outcome);
    }
  }
});

test('verification: a failed lookup keeps the last result and verification, reports the error, retries sooner', () => {
  const unknown: RecordCheck = { outcome: 'unknown', error: 'timed out' };
  const verified = row({
    verification_status: 'verified',
    verified_at: 'earlier',
    spf_status: 'ok',
    dkim_status: 'ok',
    return_path_status: 'ok',
    dmarc_status: 'ok',
  });
  const changes = applyCheck(verified, results({ dkim: unknown, dmarc: unknown }), 'not_needed', AT);
  assert.equal(changes.verification_status, 'verified');
  assert.equal(changes.verified_at, 'earlier');
  assert.equal(changes.dkim_status, 'ok');
  assert.equal(changes.dkim_error, 'timed out');
  assert.equal(changes.dmarc_status, 'error');
  assert.equal(changes.next_check_at, AT + RETRY_INTERVAL_MS);
  const fresh = applyCheck(row(), results({ spf: unknown }), 'not_needed', AT);
  assert.equal(fresh.verification_status, 'pending');
  assert.equal(fresh.verified_at, null);
  assert.equal(fresh.spf_status, 'pending');
  assert.equal(fresh.spf_error, 'timed out');
});

test('verification: review holds a passing domain in pending_review until approved', () => {
  const held = applyCheck(row({ verification_status: 'pending_review' }), results(), 'required', AT);
  assert.deepEqual([held.verification_status, held.verified_at, held.manual_review_required], ['pending_review', null, 1]);
  const undecided = applyCheck(row({ verification_status: 'pending_review' }), results(), 'undecided', AT);
  assert.deepEqual([undecided.verification_status, undecided.verified_at, undecided.manual_review_required], ['pending_review', null, 0]);
  const decided = applyCheck(row({ verification_status: 'pending_review' }), results(), 'not_needed', AT);
  assert.deepEqual([decided.verification_status, decided.verified_at], ['verified', AT_ISO]);
  const approved = applyCheck(row({ manual_review_required: 1, manually_verified_at: 'then' }), results(), 'required', AT);
  assert.deepEqual([approved.verification_status, approved.manual_review_required], ['verified', 0]);
});

test('a check that changes nothing but times is not a change', () => {
  const before = row({
    verification_status: 'verified',
    verified_at: 'a',
    spf_status: 'ok',
    dkim_status: 'ok',
    return_path_status: 'ok',
    dmarc_status: 'ok',
    tracking_status: 'ok',
    inbound_status: 'ok',
  });
  const after = { ...before, ...applyCheck(before, results(), 'not_needed', AT) };
  assert.equal(stateChanged(before, after), false);
  const broken = { ...before, ...applyCheck(before, results({ spf: { outcome: 'missing', error: 'x' } }), 'not_needed', AT) };
  assert.equal(stateChanged(before, broken), true);
});

test('RDAP: the registration event date', () => {
  assert.deepEqual(
    registrationFrom({
      events: [
        { eventAction: 'last changed', eventDate: '2020-01-01T00:00:00Z' },
        { eventAction: 'registration', eventDate: '1997-09-15T04:00:00Z' },
      ],
    }),
    { kind: 'registered', registeredAt: '1997-09-15T04:00:00.000Z' },
  );
  assert.equal(registrationFrom({ events: [{ eventAction: 'expiration', eventDate: '2030-01-01T00:00:00Z' }] }).kind, 'unknown');
  assert.equal(registrationFrom({ events: [{ eventAction: 'registration', eventDate: 'not a date' }] }).kind, 'unknown');
  assert.equal(registrationFrom(null).kind, 'unknown');
});
