// Ready-to-paste code for a first send: curl, Node (the official Emailit SDK, @emailit/node),
// Python, PHP and the SMTP relay's settings, filled with this server's address, a domain and
// an API key (the new key when there is one; a placeholder otherwise).
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useLoad } from '../lib/hooks';
import { Tabs } from './Tabs';
import { CopyButton, ErrorBox } from './ui';

export interface SnippetTarget {
  /** PUBLIC_URL: the API base (the SDKs add /v2/…). */
  baseUrl: string;
  domain: string | null;
  apiKey: string | null;
  /** The recipient of the example (the signed-in user's own address). */
  to: string;
  smtp: { host: string; port: number | null; tls_port: number | null };
}

type Kind = 'curl' | 'node' | 'python' | 'php' | 'smtp';
const TABS: ReadonlyArray<readonly [Kind, string]> = [
  ['curl', 'curl'],
  ['node', 'Node.js'],
  ['python', 'Python'],
  ['php', 'PHP'],
  ['smtp', 'SMTP'],
];

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function snippet(kind: Kind, t: SnippetTarget): string {
  const key = t.apiKey ?? 'YOUR_API_KEY';
  const from = `hello@${t.domain ?? 'your-domain.com'}`;
  const subject = 'Hello from Postlane';
  const html = '<p>It works.</p>';
  const body = JSON.stringify({ from, to: t.to, subject, html });
  switch (kind) {
    case 'curl':
      return `curl ${t.baseUrl}/v2/emails \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "Content-Type: application/json" \\\n  -d ${quote(body)}`;
    case 'node':
      return [
        '// npm install @emailit/node',
        "import { Emailit } from '@emailit/node';",
        '',
        `const emailit = new Emailit({ apiKey: ${quote(key)}, apiBase: ${quote(t.baseUrl)} });`,
        '',
        'const email = await emailit.emails.send({',
        `  from: ${quote(from)},`,
        `  to: ${quote(t.to)},`,
        `  subject: ${quote(subject)},`,
        `  html: ${quote(html)},`,
        '});',
        'console.log(email.id);',
      ].join('\n');
    case 'python':
      return [
        '# pip install requests',
        'import requests',
        '',
        'response = requests.post(',
        `    ${quote(`${t.baseUrl}/v2/emails`)},`,
        `    headers={"Authorization": "Bearer ${key}"},`,
        `    json={"from": ${quote(from)}, "to": ${quote(t.to)}, "subject": ${quote(subject)}, "html": ${quote(html)}},`,
        ')',
        'print(response.json()["id"])',
      ].join('\n');
    case 'php':
      return [
        '<?php',
        `$ch = curl_init(${quote(`${t.baseUrl}/v2/emails`)});`,
        'curl_setopt_array($ch, [',
        '    CURLOPT_POST => true,',
        '    CURLOPT_RETURNTRANSFER => true,',
        `    CURLOPT_HTTPHEADER => [${quote(`Authorization: Bearer ${key}`)}, 'Content-Type: application/json'],`,
        '    CURLOPT_POSTFIELDS => json_encode([',
        `        'from' => ${quote(from)},`,
        `        'to' => ${quote(t.to)},`,
        `        'subject' => ${quote(subject)},`,
        `        'html' => ${quote(html)},`,
        '    ]),',
        ']);',
        'echo json_decode(curl_exec($ch))->id;',
      ].join('\n');
    case 'smtp':
      return [
        `Host:      ${t.smtp.host}`,
        `Port:      ${[t.smtp.port !== null ? `${t.smtp.port} (STARTTLS)` : null, t.smtp.tls_port !== null ? `${t.smtp.tls_port} (TLS)` : null].filter(Boolean).join(' or ') || 'the SMTP relay is off on this server'}`,
        'Username:  any (for example postlane)',
        `Password:  ${key}`,
        `From:      ${from}`,
      ].join('\n');
  }
}

export function Snippets({ target, id = 'snippets' }: { target: SnippetTarget; id?: string }) {
  const [kind, setKind] = useState<Kind>('curl');
  const text = snippet(kind, target);
  const label = TABS.find(([k]) => k === kind)![1];
  return (
    <div class="snippets">
      <Tabs label="Code to send an email" tabs={TABS} selected={kind} onSelect={setKind} panelId={`${id}-panel`}>
        <pre class="snippet" aria-label={`${label} example`} tabIndex={0}>
          <code data-testid="snippet">{text}</code>
        </pre>
        <CopyButton key={kind} text={text} what={`the ${label} example`} />
      </Tabs>
    </div>
  );
}

/** The snippets for a key just created: this server's address and domain from GET /v2/onboarding. */
export function KeySnippets({ apiKey, to }: { apiKey: string; to: string }) {
  const setup = useLoad(() => ok(api.GET('/v2/onboarding')), []);
  const s = setup.data;
  if (!s) return <ErrorBox error={setup.error} />;
  return (
    <>
      <h3>Send your first email with it</h3>
      <Snippets id="key-snippets" target={{ baseUrl: s.api_base_url, domain: s.domain?.name ?? null, apiKey, to, smtp: s.smtp }} />
    </>
  );
}
