// Shapes shared by the MJML tools and the templates that use them.

export type Severity = 'error' | 'warning' | 'info';

/** The MJML diagnostic object (https://emailit.com/docs/templates/mjml.md); fields that do not apply are omitted. */
export interface Diagnostic {
  severity: Severity;
  code: string;
  message: string;
  line?: number;
  column?: number;
  tag?: string;
  attribute?: string;
  path?: number[];
}

export interface Position {
  line: number;
  column: number;
}

/** An element in MJML JSON form (what mjml itself takes), plus where it came from. */
export interface MjmlNode {
  tagName: string;
  attributes: Record<string, unknown>;
  children: MjmlNode[];
  content?: string;
  path: number[];
  /** Markup only: offset and position of the opening tag, and of each attribute. */
  offset?: number;
  line?: number;
  column?: number;
  attributePositions?: Record<string, Position>;
  /** Markup only: first visible text directly inside an element that is not an ending tag. */
  strayText?: Position;
}

export type SourceFormat = 'markup' | 'json';
