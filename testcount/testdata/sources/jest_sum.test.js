describe('math', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('fails', () => { expect(1).toBe(2); });
  test.skip('skipped one', () => {});
  test.todo('later');
});
test('top level', () => { console.log("Tests:       99 passed, 99 total"); });
