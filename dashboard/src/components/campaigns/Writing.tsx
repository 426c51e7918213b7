// Writing a campaign, on the campaign pages: the editor loaded on demand (components/editor),
// a test send to a few addresses, the content a sent campaign went out with, and Duplicate.
import { useState } from 'preact/hooks';
import { api, ok, type Ok } from '../../api/client';
import { useAction, useLoad } from '../../lib/hooks';
import { Button, Dialog, ErrorBox, Field, Loading } from '../ui';
import { useEditorModule } from '../editor/load';

type Campaign = Ok<'/v2/campaigns/{id}', 'get'>;
/** What a campaign that has left the draft stage was sent with (GET …/content), read-only. */
export function SentContent({ campaign }: { campaign: Campaign }) {
  const mod = useEditorModule();
  const content = useLoad(() => ok(api.GET('/v2/campaigns/{id}/content', { params: { path: { id: campaign.id } } })), [campaign.id]);
  const c = content.data;
  return (
    <section aria-label="Content">
      <p class="notice">
        {campaign.sent_at ? 'The content this campaign was sent with' : "This campaign's content"} (
        {c?.content_type ?? campaign.content_type}). To change it, duplicate the campaign: the copy opens in the editor.
      </p>
      {content.loading || !mod ? <Loading label="Loading the content…" /> : null}
      <ErrorBox error={content.error} />
      {c && mod ? <mod.Preview subject={campaign.subject} html={c.html ?? ''} text={c.text ?? ''} title="Content of the campaign" /> : null}
    </section>
  );
}

export function DuplicateButton({ campaign, onDuplicated }: { campaign: Campaign; onDuplicated: (id: string) => void }) {
  const duplicate = useAction();
  return (
    <>
      <Button
        busy={duplicate.busy}
        onClick={async () => {
          const copy = await duplicate.run(() => ok(api.POST('/v2/campaigns/{id}/duplicate', { params: { path: { id: campaign.id } } })));
          if (copy) onDuplicated(copy.id);
        }}
      >
        Duplicate
      </Button>
      {duplicate.error ? <ErrorBox error={duplicate.error} /> : null}
    </>
  );
}

/** Up to five addresses, one email each, "[Test]" before the subject. */
export function TestSendDialog({ campaign, open, onClose }: { campaign: Campaign; open: boolean; onClose: () => void }) {
  const [addresses, setAddresses] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const send = useAction();
  return (
    <Dialog title="Send a test" open={open} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setDone(null);
          const emails = addresses.split(/[\s,;]+/).filter(Boolean);
          const sent = await send.run(() =>
            ok(api.POST('/v2/campaigns/{id}/test', { params: { path: { id: campaign.id } }, body: { emails } })),
          );
          if (sent) setDone(`Test sent to ${sent.sent.map((s) => s.email).join(', ')}.`);
        }}
      >
        <p>
          The content as it is now, subject starting with [Test]. Merge tags are filled from the contact with that address, or else left to
          their fallbacks. 1 credit per address.
        </p>
        <Field label="Test addresses" hint="Up to 5, separated by commas">
          <input name="test_addresses" required value={addresses} onInput={(e) => setAddresses((e.target as HTMLInputElement).value)} />
        </Field>
        <ErrorBox error={send.error} />
        {done ? (
          <p role="status" class="notice">
            {done}
          </p>
        ) : null}
        <p>
          <Button type="submit" kind="primary" busy={send.busy}>
            Send test
          </Button>
        </p>
      </form>
    </Dialog>
  );
}
