// The command line of the threaded comparison, shared by its Node and Chromium runners.

/** --threads=N --sizes=a,b --reps=R --scaling-t=T --quick --out=dir → options. */
export function threadsBenchOptions(argv, hardwareThreads) {
  const args = Object.fromEntries(
    argv.map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k, v ?? true];
    }),
  );
  const quick = Boolean(args.quick);
  const threads = Number(args.threads ?? hardwareThreads);
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`--threads must be a whole number ≥ 1, got ${args.threads}`);
  return {
    threads,
    sizes: args.sizes
      ? String(args.sizes).split(',').map(Number)
      : quick
        ? [256]
        : [256, 1024, 2048],
    reps: Number(args.reps ?? (quick ? 3 : 7)),
    scalingT: Number(args['scaling-t'] ?? (quick ? 256 : 1024)),
    out: args.out,
  };
}
