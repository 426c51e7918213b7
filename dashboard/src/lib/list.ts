// The state of a list page: its page number, search text and filters; any change of search or
// filters goes back to page 1.
import { useState } from 'preact/hooks';
import { useDebounced } from './hooks';

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
