// Template versions: one row per version; versions sharing `alias` form one template.
export interface TemplatesTable {
  id: string;
  workspace_id: string;
  name: string;
  alias: string;
  from_address: string | null;
  subject: string | null;
  reply_to: string | null; // JSON array of addresses
  html: string | null;
  text_body: string | null;
  source: string | null;
  source_is_json: number;
  editor: string;
  mjml: string | null; // JSON: MjmlDocumentInfo
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    templates: TemplatesTable;
  }
}
