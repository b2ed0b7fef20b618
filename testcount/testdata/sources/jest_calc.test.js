function parse(s) {
  return { value: Number(s), unit: 'm', tags: ['a', 'b'] };
}

describe('parse', () => {
  it('reads the value', () => {
    expect(parse('1').value).toBe(1);
  });

  it('reads the unit and tags', () => {
    expect(parse('2')).toEqual({ value: 2, unit: 'km', tags: ['a', 'b', 'c'] });
  });

  describe('errors', () => {
    it('throws on garbage', () => {
      expect(() => parse('x')).toThrow('not a number');
    });
  });

  it.skip('reads dates', () => {});
});
