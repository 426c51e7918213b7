// Every page of the dashboard. Adding one is a file in this folder plus an entry here (and, for
// the navigation, a `nav` label): nothing else needs to change.
import type { ComponentType } from 'preact';
import { Accept } from './accept';
import { Authorize } from './authorize';
import { ApiKeys } from './api-keys';
import { AudienceDetail, Audiences } from './audiences';
import { AutomationDetail, AutomationRun, Automations } from './automations';
import { CampaignCompose, CampaignDetail, Campaigns } from './campaigns';
import { ContactDetail, Contacts } from './contacts';
import { Dmarc } from './dmarc';
import { DomainDetail, Domains } from './domains';
import { EmailDetail, Emails } from './emails';
import { Events } from './events';
import { EventTracking } from './event-tracking';
import { FormEditor, Forms } from './forms';
import { Members } from './members';
import { Overview } from './overview';
import { Suppressions } from './suppressions';
import { TemplateEditor, Templates } from './templates';
import { Verification, VerificationListDetail } from './verification';
import { WebhookDetail, Webhooks } from './webhooks';

export interface PageProps {
  params: Record<string, string>;
}

export interface PageDef {
  /** Path under /dashboard; `:name` segments become params. */
  path: string;
  component: ComponentType<PageProps>;
  /** Label in the navigation (pages without one are reached from another page). */
  nav?: string;
  /** Shown in the navigation to admins only. */
  adminOnly?: boolean;
}

export const pages: PageDef[] = [
  { path: '/', component: Overview, nav: 'Overview' },
  { path: '/emails', component: Emails, nav: 'Emails' },
  { path: '/emails/:id', component: EmailDetail },
  { path: '/domains', component: Domains, nav: 'Domains' },
  { path: '/domains/:id', component: DomainDetail },
  { path: '/templates', component: Templates, nav: 'Templates' },
  { path: '/templates/:id', component: TemplateEditor },
  { path: '/suppressions', component: Suppressions, nav: 'Suppressions' },
  { path: '/webhooks', component: Webhooks, nav: 'Webhooks' },
  { path: '/webhooks/:id', component: WebhookDetail },
  { path: '/contacts', component: Contacts, nav: 'Contacts' },
  { path: '/contacts/:id', component: ContactDetail },
  { path: '/audiences', component: Audiences, nav: 'Audiences' },
  { path: '/audiences/:id', component: AudienceDetail },
  { path: '/campaigns', component: Campaigns, nav: 'Campaigns' },
  { path: '/campaigns/new', component: CampaignCompose },
  { path: '/campaigns/:id', component: CampaignDetail },
  { path: '/automations', component: Automations, nav: 'Automations' },
  { path: '/automations/:id', component: AutomationDetail },
  { path: '/automations/:id/runs/:run_id', component: AutomationRun },
  { path: '/forms', component: Forms, nav: 'Forms' },
  { path: '/forms/:id', component: FormEditor },
  { path: '/verification', component: Verification, nav: 'Verification' },
  { path: '/verification/:id', component: VerificationListDetail },
  { path: '/dmarc', component: Dmarc, nav: 'DMARC' },
  { path: '/events', component: Events, nav: 'Events' },
  { path: '/event-tracking', component: EventTracking, nav: 'Event tracking' },
  { path: '/api-keys', component: ApiKeys, nav: 'API keys' },
  { path: '/members', component: Members, nav: 'Members' },
];

/** Pages that need no session (invitation and first-start links). */
export const publicPages: Array<{ path: string; component: ComponentType<any> }> = [
  { path: '/accept', component: Accept },
  { path: '/oauth/authorize', component: Authorize },
];

export function navEntries(_isAdmin: boolean): Array<{ href: string; label: string }> {
  return pages.filter((p) => p.nav && (!p.adminOnly || _isAdmin)).map((p) => ({ href: p.path, label: p.nav! }));
}
