// The campaigns tables (migrations 0012, 0026).
export interface CampaignsTable {
  id: string; // cmp_
  workspace_id: string;
  name: string;
  status: string; // draft | scheduled | queued | sending | paused | sent | canceled | archived
  status_reason: string | null; // paused | insufficient_credits | domain_not_verified | complaint_rate | hard_bounce_rate | null
  /** A sentence saying why the guardrails paused the campaign (docs/deliverability.md); null otherwise. */
  paused_reason: string | null;
  /** 1 once a person resumed it after a guardrail pause: the guardrails leave it alone since. */
  guardrails_overridden: number;
  subject: string;
  from_email: string;
  from_name: string;
  reply_to: string;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  content: string | null;
  content_type: string; // html | text | mjml
  recipients: string; // JSON [{audience_id, exclude}]
  scheduled_at: string | null;
  sent_at: string | null;
  completed_at: string | null;
  canceled_at: string | null;
  content_id: string | null;
  sending_domain_id: string | null;
  recipient_count: number;
  created_at: string;
  updated_at: string;
}

export interface CampaignRecipientsTable {
  campaign_id: string;
  contact_id: string;
  status: string; // pending | queued | skipped | canceled
  email_id: string | null;
  unsubscribed_at: string | null;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    campaigns: CampaignsTable;
    campaign_recipients: CampaignRecipientsTable;
  }
}
