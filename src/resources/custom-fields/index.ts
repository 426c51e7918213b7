// What other features use of custom-fields/: the check of one value against its field's
// definition (contact imports check each cell with it).
export { checkFieldValue, type FieldDefinitions } from './values.ts';
