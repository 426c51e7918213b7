// A list page's filter or sort as a select: its value is the list's filter of that name, and a
// change goes back to page 1 (useListState).
import type { ListState } from '../lib/list';
import { Select } from './ui';

/** The options of every "Order" select. */
export const DIRECTIONS: Array<[string, string]> = [
  ['desc', 'Descending'],
  ['asc', 'Ascending'],
];

export function FilterSelect<F extends Record<string, string>>({
  list,
  name,
  label,
  options,
}: {
  list: ListState<F>;
  name: keyof F & string;
  label: string;
  options: Array<[string, string]>;
}) {
  return <Select label={label} value={list.filters[name]} onChange={(v) => list.setFilter(name, v)} options={options} />;
}
