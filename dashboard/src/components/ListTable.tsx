// A list page's table: its loading state, the API's error, the rows (or a line saying there are
// none) and the pager, so each page only says which columns it has and how a row looks.
import { Fragment, type ComponentChildren } from 'preact';
import type { Loaded } from '../lib/hooks';
import { Link } from '../lib/router';
import { ErrorBox, Loading, Pager, TableScroll } from './ui';

/** What an empty list shows: what the thing is (one sentence) and its first action. */
export interface EmptyState {
  /** "No forms.": what is missing, in a few words. */
  title: string;
  /** What the thing is, in one sentence. */
  text: string;
  /** The first action's words; distinct from the page's own buttons (say "your first …"). */
  action?: string;
  onAction?: () => void;
  /** A link instead of a button. */
  href?: string;
}

function Empty({ empty, searching }: { empty: string | EmptyState; searching?: boolean }) {
  if (typeof empty === 'string') return <>{empty}</>;
  if (searching) return <p class="empty">{empty.title} Try another search or filter.</p>;
  return (
    <div class="empty">
      <p>
        {empty.title} {empty.text}
      </p>
      {empty.action && empty.href ? (
        <Link href={empty.href} class="button primary">
          {empty.action}
        </Link>
      ) : null}
      {empty.action && empty.onAction ? (
        <button type="button" class="primary" onClick={empty.onAction}>
          {empty.action}
        </button>
      ) : null}
    </div>
  );
}

export interface ListTableProps<T, R> {
  label: string;
  loaded: Loaded<T>;
  /** The rows of a loaded page. */
  items: (data: T) => R[];
  columns: string[];
  row: (item: R) => ComponentChildren;
  empty: string | EmptyState;
  /** A search or filter is in effect: an empty page says nothing matches rather than what the thing is. */
  searching?: boolean;
  /** Paging (omit for a list without pages). */
  page?: number;
  onPage?: (page: number) => void;
  hasNext?: (data: T) => boolean;
  /** Reloads that already show data say so to screen readers only (a live list must not flash). */
  quiet?: boolean;
}

export function ListTable<T, R>(props: ListTableProps<T, R>) {
  const { label, loaded, items, columns, row, empty, searching, page, onPage, hasNext, quiet } = props;
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
                  <td colSpan={columns.length}>
                    <Empty empty={empty} searching={searching} />
                  </td>
                </tr>
              ) : null}
            </tbody>
          </TableScroll>
          {page !== undefined && onPage ? (
            <Pager page={page} hasNext={Boolean(hasNext?.(loaded.data))} onPage={onPage} loading={loaded.loading} />
          ) : null}
        </>
      ) : null}
    </>
  );
}

/** `hasNext` for the page/limit lists: a next page URL is there. */
export const nextPageUrl = (data: { next_page_url: string | null }) => data.next_page_url !== null;
