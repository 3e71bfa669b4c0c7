import fc from "fast-check";
import type * as z from "zod";

/**
 * fast-check arbitraries derived from the zod contract, so a call or event added to the contract
 * is fuzzed without touching the tests. Valid values are generated from the schema's structure
 * and kept only when the schema itself accepts them (refinements, regexes, bounds).
 */

type Check = {_zod: {def: {check: string, pattern?: RegExp, maximum?: number, minimum?: number}}};

type Def = {
    type: string,
    checks?: Check[],
    format?: string,
    shape?: Record<string, z.ZodType>,
    catchall?: z.ZodType,
    innerType?: z.ZodType,
    entries?: Record<string, string | number>,
    values?: unknown[],
    element?: z.ZodType,
    keyType?: z.ZodType,
    valueType?: z.ZodType,
    options?: z.ZodType[],
    in?: z.ZodType,
    out?: z.ZodType
};

export function defOf(schema: z.ZodType): Def {
    return (schema as unknown as {_zod: {def: Def}})._zod.def;
}

/** The fields of a strict object schema, or null when the schema is not an object. */
export function objectShape(schema: z.ZodType): Record<string, z.ZodType> | null {
    const def = defOf(schema);
    return def.type === "object" ? def.shape ?? {} : null;
}

/** Whether unknown keys are refused (`z.strictObject`: the catch-all is `never`). */
export function isStrictObject(schema: z.ZodType): boolean {
    const def = defOf(schema);
    return def.type === "object" && def.catchall != null && defOf(def.catchall).type === "never";
}

export function isOptional(schema: z.ZodType): boolean {
    const type = defOf(schema).type;
    return type === "optional" || type === "default";
}

/** Local endpoints only: a fuzzed value that slips through must never send anything off this machine. */
const stringSamples = [
    "Hello there", "local", "Once upon a time", "http://127.0.0.1:9/v1", "https://127.0.0.1:9/v1", "fuzz-model", "a", "A.b_c:d-1"
];

const alnum = fc.string({unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), minLength: 1, maxLength: 16});

/** Values the schema accepts. `overrides` replaces the generator of an object field by name (e.g. real conversation ids). */
export function validArbitrary(schema: z.ZodType, overrides: Record<string, fc.Arbitrary<unknown>> = {}): fc.Arbitrary<unknown> {
    const accepted = (value: unknown) => schema.safeParse(value).success;
    const def = defOf(schema);
    switch (def.type) {
        case "object": {
            const shape = def.shape ?? {};
            const model: Record<string, fc.Arbitrary<unknown>> = {};
            const required: string[] = [];
            for (const [key, field] of Object.entries(shape)) {
                const optional = isOptional(field);
                const inner = optional ? defOf(field).innerType! : field;
                model[key] = overrides[key] ?? validArbitrary(inner, overrides);
                if (!optional)
                    required.push(key);
            }
            return fc.record(model, {requiredKeys: required, noNullPrototype: true}).filter(accepted);
        }
        case "optional":
            return fc.option(validArbitrary(def.innerType!, overrides), {nil: undefined});
        case "nullable":
            return fc.option(validArbitrary(def.innerType!, overrides), {nil: null, freq: 4});
        case "default":
        case "readonly":
            return validArbitrary(def.innerType!, overrides);
        case "enum":
            return fc.constantFrom(...Object.values(def.entries!));
        case "literal":
            return fc.constantFrom(...def.values!);
        case "boolean":
            return fc.boolean();
        case "null":
            return fc.constant(null);
        case "string": {
            // A regex-shaped string (ids, hashes, URLs) is generated from its pattern; anything else from a broad mix.
            const patterns = (def.checks ?? []).map((check) => check._zod.def.pattern).filter((pattern): pattern is RegExp => pattern != null);
            if (patterns.length > 0)
                // Without the i flag (fast-check refuses it): a case-sensitive match is still a match.
                return fc.stringMatching(new RegExp(patterns[0]!.source, patterns[0]!.flags.replace("i", "")), {size: "xsmall"}).filter(accepted);
            if (def.format === "url")
                return fc.constantFrom(...stringSamples.filter((sample) => accepted(sample)));
            return fc.oneof(alnum, fc.string({minLength: 1, maxLength: 40}), fc.constantFrom(...stringSamples)).filter(accepted);
        }
        case "number":
            return fc.oneof(
                fc.integer({min: -2, max: 5000}), fc.constantFrom(1, 64, 128, 512, 2048, 4096), fc.double({min: 0, max: 2, noNaN: true})
            ).filter(accepted);
        case "array":
            return fc.array(validArbitrary(def.element!, overrides), {maxLength: 3});
        case "record":
            return fc.dictionary(alnum, validArbitrary(def.valueType!, overrides), {maxKeys: 3, noNullPrototype: true}).filter(accepted);
        case "union":
            return fc.oneof(...def.options!.map((option) => validArbitrary(option, overrides)));
        case "unknown":
        case "any":
            return fc.jsonValue({maxDepth: 2});
        case "pipe":
            return validArbitrary(def.in!, overrides).filter(accepted);
        default:
            throw new Error(`contractArbitraries: no valid generator for zod type "${def.type}": extend validArbitrary`);
    }
}

/** Values that are wrong for almost any field: other JSON types, boundary and non-finite numbers, odd strings. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
    fc.anything({maxDepth: 2, maxKeys: 4}),
    fc.constantFrom<unknown>(
        NaN, Infinity, -Infinity, -0, 0, -1, 1.5, 2 ** 53 + 2, 1e308, -1e308, Number.MIN_VALUE,
        "", " ", " \n\t ", "\u0000", "../../etc/passwd", "a/b", "a b", "é", "😀", "\u202e", "null", "true", "{}",
        "a".repeat(129), "a".repeat(201), "a".repeat(257), "a".repeat(2049), "a".repeat(4097), "ftp://127.0.0.1/", "javascript:alert(1)",
        [], {}, [null], {"": 1}, true, false, null, undefined, new Date(0), 10n
    )
);

/** Own keys that attack prototypes when a receiver copies or merges objects carelessly. */
export const prototypeKeys = ["__proto__", "constructor", "prototype", "__defineGetter__", "__lookupGetter__", "hasOwnProperty", "toString", "valueOf", "isPrototypeOf"];

/** `base` with an own (not inherited) property `key`, even for `__proto__`. */
export function withOwnKey(base: object, key: string, value: unknown): Record<string, unknown> {
    const copy: Record<string, unknown> = {...base};
    Object.defineProperty(copy, key, {value, enumerable: true, writable: true, configurable: true});
    return copy;
}

/** An array or object nested `depth` levels deep, built without recursion. */
export function nested(depth: number, kind: "array" | "object", leaf: unknown = "x"): unknown {
    let value: unknown = leaf;
    for (let level = 0; level < depth; level++)
        value = kind === "array" ? [value] : {a: value};
    return value;
}

/**
 * Every chain of `nestedArrays` built so far, by depth less one: each is the one element of the next, so the deepest chain
 * holds all the shallower ones and a chain is built once per process, not once per input.
 */
const arrayChains: unknown[][] = [[]];

/**
 * What `JSON.parse("[".repeat(depth) + "]".repeat(depth))` builds, as a peer's WebSocket message can: `depth` arrays, each
 * the one element of the one around it. Building a fresh chain for each input (up to 20,000 arrays) was over a third of the
 * event fuzzer's CPU: the chains are shared between inputs, so nothing that receives one may change it (parsing never does).
 */
export function nestedArrays(depth: number): unknown[] {
    while (arrayChains.length < depth)
        arrayChains.push([arrayChains.at(-1)]);
    return arrayChains[depth - 1]!;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value))
        return false;
    const prototype = Object.getPrototypeOf(value) as unknown;
    return prototype === Object.prototype || prototype === null;
}

export function isObjectLike(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON text of `base` with `key` as its first key, as a hostile peer would send it (JSON.parse makes `__proto__` an own key). */
export function withJsonKey(base: object, key: string, value: unknown) {
    const json = JSON.stringify(base);
    return `{${JSON.stringify(key)}:${JSON.stringify(value)}${json === "{}" ? "" : ","}${json.slice(1)}`;
}

/** Values of a JSON type the field can never take (decided from its type, not by asking the schema). */
export function clearlyWrongFor(field: z.ZodType): fc.Arbitrary<unknown> | null {
    let inner = field;
    for (let def = defOf(inner); ["optional", "nullable", "default", "readonly"].includes(def.type); def = defOf(inner))
        inner = def.innerType!;
    const def = defOf(inner);
    const objects = fc.oneof(fc.array(fc.jsonValue({maxDepth: 1}), {maxLength: 3}), fc.dictionary(fc.string({maxLength: 8}), fc.jsonValue({maxDepth: 1}), {maxKeys: 3}));
    switch (def.type) {
        case "string":
            return fc.oneof(fc.double(), fc.boolean(), objects);
        case "number":
            return fc.oneof(fc.string(), fc.boolean(), objects, fc.constantFrom(NaN, Infinity, -Infinity));
        case "boolean":
            return fc.oneof(fc.double(), fc.string(), objects, fc.constantFrom(0, 1, "true", "false"));
        case "enum": {
            const allowed = new Set<unknown>(Object.values(def.entries!));
            return fc.oneof(fc.string(), fc.double(), fc.boolean(), objects).filter((value) => !allowed.has(value));
        }
        case "object":
            return fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.array(fc.jsonValue({maxDepth: 1}), {maxLength: 3}));
        case "array":
            return fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.dictionary(fc.string({maxLength: 8}), fc.jsonValue({maxDepth: 1}), {maxKeys: 3}));
        default:
            return null;
    }
}
