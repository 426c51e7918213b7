// The bounce reader against a broad corpus of real-world bounces, DSN variants, ARF reports
// and auto-replies from many MTAs and providers (test/fixtures/bounces, sources in its README).
// The expectation of every sample is the one its source project states for it, mapped onto
// our reasons (fromSisimaiReason). A second pass checks that every bounce and complaint is
// recognised with the recipient that failed or complained (recipients.json).
// Set BOUNCE_CORPUS_VERBOSE=1 to list the misses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { parseBounce } from '../../src/mail/bounces.ts';
import { fromSisimaiReason } from '../../src/mail/bounce-reasons.ts';

const root = new URL('../fixtures/bounces/', import.meta.url).pathname;

interface Expected {
  recipients: Array<{ status: string; reply: string; reason: string; hard: boolean; feedbackType?: string }>;
}

function corpus(dir: string): Array<{ file: string; raw: Buffer; expected: Expected }> {
  const expected = JSON.parse(readFileSync(`${root}${dir}/expected.json`, 'utf8')) as Record<string, Expected>;
  return readdirSync(`${root}${dir}`)
    .filter((file) => file.endsWith('.eml') && expected[file])
    .map((file) => ({ file: `${dir}/${file}`, raw: readFileSync(`${root}${dir}/${file}`), expected: expected[file] }));
}

test('the bounce reader classifies the real-world corpus (reason of the failed recipient)', async () => {
  const samples = corpus('sisimai');
  assert.ok(samples.length >= 500, `corpus has ${samples.length} samples`);
  const misses: string[] = [];
  let recipientMisses = 0;
  for (const sample of samples) {
    const report = await parseBounce(sample.raw);
    const first = sample.expected.recipients[0];
    const want = first.reason === 'delivered' ? 'delivered' : fromSisimaiReason(first.reason);
    const got = want === 'delivered' ? (report.kind === 'delivered' ? 'delivered' : report.kind) : report.reason;
    if (got !== want)
      misses.push(
        `${sample.file}: want ${want} (${first.reason} ${first.status} ${first.reply}), got ${got} [${report.kind}/${report.source}] ${report.status ?? ''} ${(report.diagnostic ?? '').slice(0, 140)}`,
      );
    // Bounces and complaints must name the recipient (or be tied back through VERP/headers).
    if ((report.kind === 'bounce' || report.kind === 'complaint') && !report.recipient && !report.originalMessageId) recipientMisses++;
  }
  const rate = 1 - misses.length / samples.length;
  if (process.env.BOUNCE_CORPUS_VERBOSE) console.log(misses.join('\n'));
  console.log(
    `bounce corpus: ${samples.length - misses.length}/${samples.length} classified correctly (${(rate * 100).toFixed(1)}%), ${recipientMisses} reports with neither recipient nor original Message-ID`,
  );
  assert.ok(rate >= MIN_RATE, `recognition rate ${(rate * 100).toFixed(1)}% below ${MIN_RATE * 100}%:\n${misses.slice(0, 40).join('\n')}`);
});

const MIN_RATE = 0.99;

/** `"a..b"@host` and `a..b@host` name one mailbox. */
const plain = (address: string) => address.toLowerCase().replace(/"/g, '');

// The corpora with the failed recipient each sample names (test/fixtures/bounces/README.md).
// BounceParser's is not stored (its licence): fetch-bounceparser.sh brings it, then it counts too.
const RECIPIENT_CORPORA = [
  { name: 'sisimai', dir: 'sisimai/', expected: 'sisimai/recipients.json', minSamples: 640 },
  { name: 'bouncehandler', dir: 'bouncehandler/', expected: 'bouncehandler/recipients.json', minSamples: 75 },
  { name: 'bounceparser', dir: 'bounceparser/', expected: 'bounceparser.json', minSamples: 110, optional: true },
];

test('the bounce reader recognises every bounce and complaint of the corpora with its failed recipient', async () => {
  const misses: string[] = [];
  let total = 0;
  const lines: string[] = [];
  for (const corpus of RECIPIENT_CORPORA) {
    if (corpus.optional && !existsSync(`${root}${corpus.dir}`)) {
      lines.push(`${corpus.name}: not fetched (sh test/fixtures/bounces/fetch-bounceparser.sh)`);
      continue;
    }
    const wanted = JSON.parse(readFileSync(`${root}${corpus.expected}`, 'utf8')) as Record<string, { recipients: string[] }>;
    const files = Object.keys(wanted);
    assert.ok(files.length >= corpus.minSamples, `${corpus.name} has ${files.length} samples`);
    const counts = { bounce: 0, delay: 0, complaint: 0, delivered: 0, other: 0 };
    let missed = 0;
    for (const file of files) {
      const report = await parseBounce(readFileSync(`${root}${corpus.dir}${file}`));
      const want = wanted[file].recipients.map(plain);
      // A report that names nobody (a redacted ARF, a malformed address) is recognised when it names the returned message.
      const ok =
        want.length === 0
          ? (report.kind === 'complaint' || report.kind === 'bounce') && Boolean(report.originalMessageId)
          : (report.reason !== null || report.kind === 'delivered') && report.recipient !== null && want.includes(plain(report.recipient));
      if (ok) counts[report.kind in counts ? (report.kind as keyof typeof counts) : 'other']++;
      else {
        missed++;
        misses.push(
          `${corpus.name}/${file}: want ${want.join(', ') || '(none, by Message-ID)'}, got ${report.kind}/${report.source}/${report.reason} ${report.recipient}`,
        );
      }
    }
    total += files.length;
    lines.push(
      `${corpus.name}: ${files.length - missed}/${files.length} (${(100 - (missed / files.length) * 100).toFixed(1)}%; ${JSON.stringify(counts)})`,
    );
  }
  const rate = 1 - misses.length / total;
  if (process.env.BOUNCE_CORPUS_VERBOSE) console.log(misses.join('\n'));
  console.log(
    `bounce corpora recipients: ${total - misses.length}/${total} recognised with the failed recipient (${(rate * 100).toFixed(1)}%)\n  ${lines.join('\n  ')}`,
  );
  assert.ok(rate >= MIN_RATE, `recognition rate ${(rate * 100).toFixed(1)}% below ${MIN_RATE * 100}%:\n${misses.slice(0, 40).join('\n')}`);
});
