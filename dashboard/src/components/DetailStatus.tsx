// What stands under a detail page's header: the link back to its list, the spinner while it
// loads and the API's error (of the load or of an action on the page).
import { Link } from '../lib/router';
import { ErrorBox, Loading } from './ui';

export function DetailStatus({
  back,
  backText,
  loading,
  error,
}: {
  back: string;
  backText: string;
  loading: boolean;
  error: string | null | undefined;
}) {
  return (
    <>
      <p>
        <Link href={back}>{backText}</Link>
      </p>
      {loading ? <Loading /> : null}
      <ErrorBox error={error} />
    </>
  );
}
