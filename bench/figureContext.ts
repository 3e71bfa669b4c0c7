import {loadAverage1m} from "./stats.js";

/**
 * What each group of figures in `npm run bench`'s JSON report carries beside it (#25): the 1-minute
 * load average when it was measured (the machine may be shared: a busy one moves every figure) and
 * the command that measures it again.
 */
export type FigureContext = {loadAverage1m: number, command: string};

export function figureContext(command: string): FigureContext {
    return {loadAverage1m: loadAverage1m(), command};
}

/** A printed figure with the load average it was measured under. */
export function withLoad(text: string, context: {loadAverage1m: number}) {
    return `${text}  [load ${context.loadAverage1m.toFixed(2)}]`;
}

/** `npm run bench` with these options: the command that measures one part of the report again. */
export function benchCommand(options: Record<string, string | number | boolean>) {
    const args = Object.entries(options).flatMap(([name, value]) =>
        value === true ? [`--${name}`] : value === false ? [`--no-${name}`] : [`--${name}`, /\s/.test(String(value)) ? JSON.stringify(String(value)) : String(value)]);
    return ["npm run bench --", ...args].join(" ");
}
