// One rounding rule for every decimal the pages' scripts print: half away from zero, on the exact
// value, the same as generator/render/decimals.py (node replays the vectors it writes:
// tests/js/decimals.test.mjs). 13/8 prints as 1.63, -13/8 as -1.63, 33/40 as 0.83; a rounded zero
// has no sign. A value is an exact fraction { n, d } of BigInts (what-if-core.js's fractions), a
// BigInt, or a Number, which is rounded as the binary fraction it exactly is (0.125 is a tie,
// 2.675 is 2.67499... and prints as 2.67).
// A classic script (global Decimals), so pages work from file://; node loads it through module.exports.

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.Decimals = api;
})(typeof self !== "undefined" ? self : globalThis, function () {
  "use strict";

  // A Number's exact value as n / d (d a power of two), from its IEEE 754 bits.
  function fromDouble(x) {
    if (!Number.isFinite(x)) throw new RangeError(`${x} has no decimal to print`);
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0);
    const lo = view.getUint32(4);
    const negative = hi >>> 31 === 1;
    const biased = (hi >>> 20) & 0x7ff;
    let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    let exponent = -1074; // subnormal
    if (biased !== 0) {
      mantissa |= 1n << 52n;
      exponent = biased - 1075;
    }
    const n = negative ? -mantissa : mantissa;
    return exponent >= 0 ? { n: n << BigInt(exponent), d: 1n } : { n, d: 1n << BigInt(-exponent) };
  }

  function exact(value) {
    if (typeof value === "bigint") return { n: value, d: 1n };
    if (typeof value === "number") return fromDouble(value);
    if (value && typeof value.n === "bigint" && typeof value.d === "bigint" && value.d > 0n) return value;
    throw new TypeError("a decimal needs a fraction { n, d } of BigInts, a BigInt or a Number");
  }

  const abs = (x) => (x < 0n ? -x : x);

  // value x 10^digits to the nearest integer (a BigInt), ties away from zero.
  function rounded(value, digits = 0) {
    const { n, d } = exact(value);
    const scaled = n * 10n ** BigInt(digits);
    const magnitude = (2n * abs(scaled) + d) / (2n * d); // floor(|x| + 1/2)
    return scaled < 0n ? -magnitude : magnitude;
  }

  // 13/8 -> "1.63" at two digits.
  function fixed(value, digits = 2) {
    const n = rounded(value, digits);
    const scale = 10n ** BigInt(digits);
    const whole = abs(n) / scale;
    const part = (abs(n) % scale).toString().padStart(digits, "0");
    const text = digits > 0 ? `${whole}.${part}` : whole.toString();
    return n < 0n ? `-${text}` : text;
  }

  const times100 = (value) => {
    const { n, d } = exact(value);
    return { n: n * 100n, d };
  };

  const pct = (value, digits = 0) => `${fixed(times100(value), digits)}%`;
  const points = (value, digits = 1) => `${fixed(times100(value), digits)} percentage points`;
  const times = (value, digits = 2) => `${fixed(value, digits)}\u00d7`;

  // 0.0000123 -> "1.2 × 10^-5" at one digit.
  function sci(value, digits = 1) {
    const { n, d } = exact(value);
    if (n === 0n) return `${fixed(0n, digits)} \u00d7 10^0`;
    let exponent = abs(n).toString().length - d.toString().length; // 10^(e-1) < |x| < 10^(e+1)
    const over = (e) => (e >= 0 ? { n, d: d * 10n ** BigInt(e) } : { n: n * 10n ** BigInt(-e), d });
    const below = (e) => { // |x| < 10^e
      const t = over(e);
      return abs(t.n) < t.d;
    };
    if (below(exponent)) exponent -= 1;
    let mantissa = rounded(over(exponent), digits);
    if (abs(mantissa) === 10n ** BigInt(digits + 1)) { // 9.96 at one digit rounds up to 10.0
      exponent += 1;
      mantissa = rounded(over(exponent), digits);
    }
    return `${fixed({ n: mantissa, d: 10n ** BigInt(digits) }, digits)} \u00d7 10^${exponent}`;
  }

  return { exact, rounded, fixed, pct, points, times, sci };
});
