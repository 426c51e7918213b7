// The email as a recipient sees it: the HTML in a sandboxed frame 600 px wide (desktop) or
// 375 px (a phone), or the plain-text part, merge tags filled for a sample contact.
import { useState } from 'preact/hooks';
import { Select } from '../ui';
import { fillSample, SAMPLES, type SampleKey } from './document';

type View = 'desktop' | 'mobile' | 'text';
const VIEWS: Array<[View, string]> = [
  ['desktop', 'Desktop'],
  ['mobile', 'Mobile'],
  ['text', 'Plain text'],
];

export function Preview({ subject, html, text, busy, title = 'Preview of the campaign' }: { subject: string; html: string; text: string; busy?: boolean; title?: string }) {
  const [view, setView] = useState<View>('desktop');
  const [sample, setSample] = useState<SampleKey>('ada');
  const values = SAMPLES[sample].values;
  return (
    <section aria-labelledby="preview-title" class="email-preview">
      <div class="toolbar">
        <h2 id="preview-title">Preview</h2>
        <div class="segmented" role="group" aria-label="Preview as">
          {VIEWS.map(([key, label]) => (
            <button type="button" aria-pressed={view === key} class={view === key ? 'primary' : 'plain'} onClick={() => setView(key)}>
              {label}
            </button>
          ))}
        </div>
        <Select label="Contact" value={sample} onChange={(v) => setSample(v as SampleKey)} options={Object.entries(SAMPLES).map(([k, s]) => [k, s.label])} />
        {busy ? <span class="muted">Compiling…</span> : null}
      </div>
      <p class="muted">
        Subject: <strong>{fillSample(subject, values, false) || '(no subject)'}</strong>
      </p>
      {view === 'text' ? (
        <pre class="raw" tabIndex={0} aria-label="Plain-text preview">
          {fillSample(text, values, false) || '(no plain-text part)'}
        </pre>
      ) : (
        <div class="preview-stage">
          <iframe class={`email-frame preview-${view}`} style={{ width: view === 'mobile' ? '375px' : '600px' }} title={title} sandbox="" srcdoc={fillSample(html, values, true)} data-width={view === 'mobile' ? 375 : 600} />
        </div>
      )}
    </section>
  );
}
