// Table types of product events (migration 0023_product_events).
export interface EventDefinitionsTable {
  id: string;
  workspace_id: string;
  name: string;
  title: string | null;
  description: string | null;
  properties: string; // JSON PropertyDefinition[]
  created_at: string;
  updated_at: string;
}

export interface ContactEventsTable {
  event_id: string;
  workspace_id: string;
  contact_id: string;
  created_at: string;
}

export interface CustomEventTypesTable {
  workspace_id: string;
  name: string;
  created_at: string;
}

export interface TrackingKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  key: string;
  allowed_origins: string; // JSON string[]
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    event_definitions: EventDefinitionsTable;
    contact_events: ContactEventsTable;
    custom_event_types: CustomEventTypesTable;
    tracking_keys: TrackingKeysTable;
  }
}
