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

/** `fill` false: merge tags shown as written (a template's variables have no sample values). */
export function Preview({
  subject,
  html,
  text,
  busy,
  title = 'Preview of the campaign',
  fill = true,
}: {
  subject: string;
  html: string;
  text: string;
  busy?: boolean;
  title?: string;
  fill?: boolean;
}) {
  const [view, setView] = useState<View>('desktop');
  const [sample, setSample] = useState<SampleKey>('ada');
  const values = SAMPLES[sample].values;
  const shown = (source: string, html: boolean) => (fill ? fillSample(source, values, html) : source);
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
        {fill ? (
          <Select
            label="Contact"
            value={sample}
            onChange={(v) => setSample(v as SampleKey)}
            options={Object.entries(SAMPLES).map(([k, s]) => [k, s.label])}
          />
        ) : null}
        {busy ? <span class="muted">Compiling…</span> : null}
      </div>
      <p class="muted">
        Subject: <strong>{shown(subject, false) || '(no subject)'}</strong>
      </p>
      {view === 'text' ? (
        <pre class="raw" tabIndex={0} aria-label="Plain-text preview">
          {shown(text, false) || '(no plain-text part)'}
        </pre>
      ) : (
        <div class="preview-stage" tabIndex={0} role="group" aria-label={`${title}, ${view === 'mobile' ? '375' : '600'} px wide`}>
          <iframe
            class={`email-frame preview-${view}`}
            style={{ width: view === 'mobile' ? '375px' : '600px' }}
            title={title}
            sandbox=""
            srcdoc={shown(html, true)}
            data-width={view === 'mobile' ? 375 : 600}
          />
        </div>
      )}
    </section>
  );
}
