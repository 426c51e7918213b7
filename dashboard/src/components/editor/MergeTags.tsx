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

/** `variables`: a template's Temple variables, named freely, rather than a contact's fields. */
export function MergeTagPicker({ onInsert, variables = false }: { onInsert: (tag: string) => void; variables?: boolean }) {
  const fields = useLoad(
    () => (variables ? Promise.resolve(null) : ok(api.GET('/v2/custom-fields', { params: { query: { limit: 100 } as never } }))),
    [variables],
  );
  const [field, setField] = useState(variables ? 'name' : 'first_name');
  const [fallback, setFallback] = useState('');
  const custom: Array<[string, string]> = (fields.data?.data ?? []).map((f) => [`cf.${f.key}`, `${f.label || f.key} (custom)`]);
  return (
    <fieldset class="group merge-tags">
      <legend>{variables ? 'Variables' : 'Merge tags'}</legend>
      {variables ? (
        <label class="field inline">
          <span class="label">Variable</span>
          <input name="variable" value={field} onInput={(e) => setField((e.target as HTMLInputElement).value.trim())} />
        </label>
      ) : (
        <Select label="Field" value={field} onChange={setField} options={[...STANDARD, ...custom]} />
      )}
      <label class="field inline">
        <span class="label">Fallback</span>
        <input
          name="fallback"
          value={fallback}
          placeholder="e.g. there"
          onInput={(e) => setFallback((e.target as HTMLInputElement).value)}
        />
      </label>
      <Button
        onMouseDown={(e) => e.preventDefault() /* keep the cursor in the field being written */}
        onClick={() => onInsert(mergeTag(field, field === 'unsubscribe_url' ? '' : fallback))}
      >
        {variables ? 'Insert variable' : 'Insert merge tag'}
      </Button>
      <p class="hint">
        Inserted where the cursor is, e.g. <code>{mergeTag(field, field === 'unsubscribe_url' ? '' : fallback || 'there')}</code>: the
        fallback is used when there is no value.
      </p>
    </fieldset>
  );
}
