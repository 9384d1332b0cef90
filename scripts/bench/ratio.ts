/**
 * A ratio as the bench tables print it: rounded down, not to the nearest,
 * because each is read against a goal (0.497 of nginx must not print as
 * the 0.50 the goal asks for).
 */
export function ratioText (a: number, b: number, digits = 2): string {
  const scale = 10 ** digits
  // The epsilon keeps a ratio like 29/100 (28.999... hundredths in binary) at 0.29.
  return (Math.floor((a / b) * scale + 1e-9) / scale).toFixed(digits)
}

/** The median: the middle value, or the mean of the middle two of an even count (two rounds must not print the better one). */
export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
