// The forms tables (migration 0013).
export interface FormsTable {
  id: string;
  workspace_id: string;
  name: string;
  type: string; // popup | full_page | flyout | embed | banner
  status: string; // draft | live
  token: string; // public, used by the embed script
  definition: string; // JSON, stored as given; checked at publish
  settings: string; // JSON
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

export interface FormSubmissionsTable {
  id: string;
  form_id: string;
  workspace_id: string;
  fields: string; // JSON: input name → submitted value
  page_url: string | null;
  experiment_id: string | null;
  variant_id: string | null;
  challenge: string; // digest of the solved challenge's signature (unique: no replay)
  created_at: string;
}

export interface FormEmbedKeysTable {
  workspace_id: string;
  public_key: string; // names the workspace in its embed script's URL
  created_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    forms: FormsTable;
    form_submissions: FormSubmissionsTable;
    form_embed_keys: FormEmbedKeysTable;
  }
}
