// A list page's table: its loading state, the API's error, the rows (or a line saying there are
// none) and the pager, so each page only says which columns it has and how a row looks.
import { Fragment, type ComponentChildren } from 'preact';
import type { Loaded } from '../lib/hooks';
import { ErrorBox, Loading, Pager, TableScroll } from './ui';

export interface ListTableProps<T, R> {
  label: string;
  loaded: Loaded<T>;
  /** The rows of a loaded page. */
  items: (data: T) => R[];
  columns: string[];
  row: (item: R) => ComponentChildren;
  empty: string;
  /** Paging (omit for a list without pages). */
  page?: number;
  onPage?: (page: number) => void;
  hasNext?: (data: T) => boolean;
  /** Reloads that already show data say so to screen readers only (a live list must not flash). */
  quiet?: boolean;
}

export function ListTable<T, R>(props: ListTableProps<T, R>) {
  const { label, loaded, items, columns, row, empty, page, onPage, hasNext, quiet } = props;
  const rows = loaded.data ? items(loaded.data) : [];
  return (
    <>
      {loaded.loading && !(quiet && loaded.data) ? <Loading /> : null}
      {loaded.loading && quiet && loaded.data ? (
        <span class="visually-hidden" role="status">
          Updating
        </span>
      ) : null}
      <ErrorBox error={loaded.error} />
      {loaded.data ? (
        <>
          <TableScroll label={label}>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th scope="col">{column}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {/* Keyed by the item's id: a reload that adds rows above never hands one row's DOM state (focus, an opened detail) to another. */}
              {rows.map((item, i) => (
                <Fragment key={(item as { id?: unknown }).id ?? i}>{row(item)}</Fragment>
              ))}
              {rows.length === 0 ? (
                <tr>
                  <td colSpan={columns.length}>{empty}</td>
                </tr>
              ) : null}
            </tbody>
          </TableScroll>
          {page !== undefined && onPage ? <Pager page={page} hasNext={Boolean(hasNext?.(loaded.data))} onPage={onPage} loading={loaded.loading} /> : null}
        </>
      ) : null}
    </>
  );
}

/** `hasNext` for the page/limit lists: a next page URL is there. */
export const nextPageUrl = (data: { next_page_url: string | null }) => data.next_page_url !== null;
