test('other passes', () => {});
