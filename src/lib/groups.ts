/**
 * `items` in order, cut into groups of at most `max` by `weight` (an item heavier than `max` is a
 * group alone) and of at most `count` items: the statements of a batch that each fit one bound
 * parameter, the pages of an export that each fit the memory it is given.
 */
export function inGroups<T>(
  items: Iterable<T>,
  weight: (item: T) => number,
  max: number,
  count = Infinity,
): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let total = 0;
  for (const item of items) {
    const w = weight(item);
    if (group.length > 0 && (total + w > max || group.length >= count)) {
      groups.push(group);
      group = [];
      total = 0;
    }
    group.push(item);
    total += w;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
