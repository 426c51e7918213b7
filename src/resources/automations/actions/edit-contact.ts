// edit_contact: email, first_name, last_name and unsubscribed update the run's contact; other
// keys set its custom fields (the contacts' rule, in the visit's transaction).
import { Type } from '@sinclair/typebox';
import { findContact, updateContact } from '../../contacts/service.ts';
import { isObject, nonEmpty, StepFailure, type ActionDefinition } from './action.ts';

export const editContact: ActionDefinition = {
  title: 'Edit contact',
  description: "Updates the run's contact: email, first_name, last_name and unsubscribed set those fields; other keys set custom fields.",
  config: Type.Object({
    fields: Type.Array(
      Type.Object({
        key: Type.String({ minLength: 1, description: 'email, first_name, last_name, unsubscribed, or a custom field key' }),
        value: Type.Unknown({ description: 'The new value; text may hold placeholders' }),
      }),
      { minItems: 1, description: 'The fields to set' },
    ),
  }),
  branching: 'default',

  check(c, { add }) {
    if (!Array.isArray(c.fields) || c.fields.length === 0) add('fields', 'The fields are required (items of key and value).');
    else
      c.fields.forEach((f: any, j: number) => {
        if (!isObject(f) || !nonEmpty(f.key)) add(`fields.${j}.key`, 'Each field needs a key.');
      });
  },

  async run({ workspaceId, config, contact, finish }) {
    if (!contact) throw new StepFailure("The run's contact no longer exists.");
    const input: Record<string, any> = {};
    const custom: Record<string, unknown> = {};
    for (const field of config.fields as Array<{ key: string; value: unknown }>) {
      if (field.key === 'unsubscribed') input.unsubscribed = field.value === true || field.value === 'true';
      else if (['email', 'first_name', 'last_name'].includes(field.key))
        input[field.key] = field.value === null ? null : String(field.value);
      else custom[field.key] = field.value;
    }
    if (Object.keys(custom).length > 0) input.merge_custom_fields = custom;
    return finish(async (tx) => {
      const fresh = (await findContact(tx, workspaceId, contact.id)) ?? contact;
      await updateContact(tx, workspaceId, fresh, input);
      return {
        status: 'completed',
        outcome: 'updated',
        data: { result: 'updated', fields: config.fields.map((f: { key: string }) => f.key) },
      };
    });
  },
};
