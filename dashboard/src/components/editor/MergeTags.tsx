// The merge tag picker: the audience's fields (first_name, last_name, email, unsubscribe_url and
// each custom field as cf.<key>) with an optional default, inserted where the cursor was last.
import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client';
import { useLoad } from '../../lib/hooks';
import { Button, Select } from '../ui';
import { mergeTag } from './document';

const STANDARD: Array<[string, string]> = [
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['email', 'Email address'],
  ['unsubscribe_url', 'Unsubscribe link'],
];

export function MergeTagPicker({ onInsert }: { onInsert: (tag: string) => void }) {
  const fields = useLoad(() => ok(api.GET('/v2/custom-fields', { params: { query: { limit: 100 } as never } })), []);
  const [field, setField] = useState('first_name');
  const [fallback, setFallback] = useState('');
  const custom: Array<[string, string]> = (fields.data?.data ?? []).map((f) => [`cf.${f.key}`, `${f.label || f.key} (custom)`]);
  return (
    <fieldset class="group merge-tags">
      <legend>Merge tags</legend>
      <Select label="Field" value={field} onChange={setField} options={[...STANDARD, ...custom]} />
      <label class="field inline">
        <span class="label">Fallback</span>
        <input name="fallback" value={fallback} placeholder="e.g. there" onInput={(e) => setFallback((e.target as HTMLInputElement).value)} />
      </label>
      <Button
        onMouseDown={(e) => e.preventDefault() /* keep the cursor in the field being written */}
        onClick={() => onInsert(mergeTag(field, field === 'unsubscribe_url' ? '' : fallback))}
      >
        Insert merge tag
      </Button>
      <p class="hint">
        Inserted where the cursor is, e.g. <code>{mergeTag(field, field === 'unsubscribe_url' ? '' : fallback || 'there')}</code>: the fallback is used when the contact has no value.
      </p>
    </fieldset>
  );
}
