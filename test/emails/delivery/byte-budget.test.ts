// The delivery worker's byte budget: pure logic, no app.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteBudget } from '../../../src/resources/emails/delivery/byte-budget.ts';

const settled = () => new Promise((resolve) => setImmediate(resolve));

test('grants while the bytes fit, then in arrival order as bytes come back', async () => {
  const budget = new ByteBudget(100);
  const first = await budget.acquire(60);
  const order: string[] = [];
  const second = budget.acquire(50).then((release) => (order.push('second'), release));
  // Fits, but must not overtake the message that came first.
  const third = budget.acquire(10).then((release) => (order.push('third'), release));
  await settled();
  assert.deepEqual(order, []);
  first();
  await settled();
  assert.deepEqual(order, ['second', 'third']);
  (await second)();
  (await third)();
  const again = await budget.acquire(100);
  again();
});

test('a message larger than the whole budget goes alone, once nothing else is in flight', async () => {
  const budget = new ByteBudget(100);
  const small = await budget.acquire(10);
  let large = false;
  const big = budget.acquire(500).then((release) => ((large = true), release));
  await settled();
  assert.equal(large, false);
  small();
  const release = await big;
  assert.equal(large, true);
  let next = false;
  const after = budget.acquire(1).then((r) => ((next = true), r));
  await settled();
  assert.equal(next, false);
  release();
  (await after)();
  assert.equal(next, true);
});
