// The state of a list page: its page number, search text and filters; any change of search or
// filters goes back to page 1. useListPage adds the loading of the page itself.
import { useState } from 'preact/hooks';
import { useDebounced, useLoad, type Loaded } from './hooks';

export function useListState<F extends Record<string, string>>(filters: F) {
  const [page, setPage] = useState(1);
  const [search, setSearchText] = useState('');
  const [values, setValues] = useState<F>(filters);
  const settledSearch = useDebounced(search);
  return {
    page,
    setPage,
    search,
    settledSearch,
    setSearch(value: string) {
      setSearchText(value);
      setPage(1);
    },
    filters: values,
    /** A search or a filter other than the page's defaults narrows the list. */
    narrowed: settledSearch !== '' || Object.keys(values).some((key) => values[key] !== filters[key]),
    setFilter(key: keyof F, value: string) {
      setValues({ ...values, [key]: value });
      setPage(1);
    },
  };
}

/** Only the query parameters that are set (an empty filter is no filter). */
export function present(query: Record<string, string | number | undefined>): Record<string, string | number> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string | number>;
}

export type ListState<F extends Record<string, string>> = ReturnType<typeof useListState<F>>;

export interface ListPage<T, F extends Record<string, string>> extends ListState<F> {
  loaded: Loaded<T>;
  /** What ListTable needs from the list: `<ListTable {...list.table} …/>`. */
  table: { loaded: Loaded<T>; page: number; onPage: (page: number) => void; searching: boolean };
}

/**
 * A list page's state and its loaded page in one: `load` gets the usual query (page, `limit`,
 * search and the filters that are set) and the list state (for an API with other parameter
 * names), and runs again when the page, the settled search, a filter or one of `deps` changes.
 */
export function useListPage<T, F extends Record<string, string>>(
  filters: F,
  load: (query: Record<string, string | number>, list: ListState<F>) => Promise<T>,
  options: { limit?: number; deps?: unknown[] } = {},
): ListPage<T, F> {
  const list = useListState(filters);
  const query = present({ page: list.page, limit: options.limit ?? 25, search: list.settledSearch, ...list.filters });
  const loaded = useLoad(() => load(query, list), [list.page, list.settledSearch, list.filters, ...(options.deps ?? [])]);
  return { ...list, loaded, table: { loaded, page: list.page, onPage: list.setPage, searching: list.narrowed } };
}
