/** Types of bin/serveThreadpoolSize.cjs (plain JavaScript, so that the launcher can require it before anything is compiled). */
export declare const defaultServeParallel: number;
export declare function serveThreadpoolSize(args: readonly string[], cores: number): number | null;
