import { Link } from '../lib/router';
import { PageHeader } from '../components/ui';

export function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is no page here. <Link href="/">Go to the overview</Link>.
      </p>
    </>
  );
}
