// Custom field definitions of a workspace (migration 0011).
export interface CustomFieldsTable {
  id: string; // fld_
  workspace_id: string;
  key: string; // unique per workspace
  label: string;
  type: string; // text | number | date | boolean
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    custom_fields: CustomFieldsTable;
  }
}
