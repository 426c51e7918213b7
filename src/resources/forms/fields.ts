// A public submission's fields checked against the inputs of the form the visitor saw:
// required inputs, email syntax, phone and date shapes, radio/dropdown/checkbox values from
// the definition's options. Names the form does not ask for are dropped, not stored.
import { normalizeAddress } from '../../platform/addresses.ts';
import { optionOf, type InputBlock } from './definition.ts';

export type FieldValue = string | boolean | string[];

export interface CheckedFields {
  fields: Record<string, FieldValue>;
  /** Messages by input name; empty when the submission is valid. */
  errors: Record<string, string[]>;
}

const PHONE = /^\+?[0-9\s().-]{4,30}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MAX_TEXT = 1000;

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === false ||
    (typeof value === 'string' && value.trim() === '') ||
    (Array.isArray(value) && value.length === 0)
  );
}

function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** One non-empty value as stored, or the message saying why it is refused. */
function checkValue(input: InputBlock, value: unknown): { value: FieldValue } | { error: string } {
  const values = (input.options ?? []).map((option) => optionOf(option).value);
  switch (input.type) {
    case 'checkbox':
      if (values.length === 0) return value === true ? { value: true } : { error: 'Must be true or false' };
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && values.includes(item)))
        return { error: 'Choose among the options' };
      return { value: [...new Set(value as string[])] };
    case 'radio':
    case 'dropdown':
      return typeof value === 'string' && values.includes(value) ? { value } : { error: 'Choose one of the options' };
  }
  if (typeof value !== 'string') return { error: 'Must be text' };
  const text = value.trim();
  if (text.length > MAX_TEXT) return { error: `Must be at most ${MAX_TEXT} characters` };
  switch (input.type) {
    case 'email': {
      const address = normalizeAddress(text);
      return address === null ? { error: 'Enter a valid email address' } : { value: address };
    }
    case 'phone':
      return PHONE.test(text) && (text.match(/\d/g) ?? []).length >= 4 ? { value: text } : { error: 'Enter a valid phone number' };
    case 'date':
      return isCalendarDate(text) ? { value: text } : { error: 'Enter a date as YYYY-MM-DD' };
    default:
      return { value: text };
  }
}

export function checkFields(inputs: InputBlock[], submitted: Record<string, unknown>): CheckedFields {
  const fields: Record<string, FieldValue> = {};
  const errors: Record<string, string[]> = {};
  for (const input of inputs) {
    const value = Object.hasOwn(submitted, input.name) ? submitted[input.name] : undefined;
    if (isEmpty(value)) {
      if (input.required) errors[input.name] = ['This field is required'];
      continue;
    }
    const checked = checkValue(input, value);
    if ('error' in checked) errors[input.name] = [checked.error];
    else fields[input.name] = checked.value;
  }
  return { fields, errors };
}
