import test from 'node:test';
import assert from 'node:assert';

test('passes', () => {});
test('fails', () => { assert.strictEqual(1, 2); });
test('skipped', { skip: 'not today' }, () => {});
test('todo', { todo: true }, () => {});
test('group', async (t) => {
  await t.test('inner pass', () => {});
  await t.test('inner skip', { skip: true }, () => {});
});
