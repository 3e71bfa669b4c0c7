import type * as z from "zod";
import {GpuSettingSchema} from "../core/common/api/gpuSchemas.js";
import type {GpuSetting} from "../core/common/api/types.js";
import {findSecretKind, secretKinds, type SecretKindId} from "../core/common/secretScan/secretKinds.js";
import {InvalidOptionError} from "./InvalidOptionError.js";
import {describeZodIssues} from "../core/common/describeZodIssues.js";

/**
 * Commander argument parsers that check a flag's value with the core's own zod schema (from
 * `src/core/common/api`), so that the CLI refuses what the RPC would refuse, naming the flag,
 * the value and the rule. They throw `InvalidOptionError`, which `main.ts` reports (as JSON
 * with `--json`) with exit code 1.
 */

const wholeNumber = /^[+-]?\d+$/;
const decimalNumber = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** A number within the schema's range, whole when the schema says so: `--max-tokens`, `--temperature`. */
export function numberOption(option: string, schema: z.ZodNumber) {
    const rule = describeNumberRule(schema);
    return (given: string): number => {
        const trimmed = given.trim();
        const value = Number(trimmed);
        if (!(schema.isInt ? wholeNumber : decimalNumber).test(trimmed) || !schema.safeParse(value).success)
            throw new InvalidOptionError(option, given, rule, {mustBe: true});
        return value;
    };
}

/**
 * A text checked by the schema: `--conversation`, `--prompt`. A `private` value (a prompt) is
 * never echoed in the error, only its length.
 */
export function textOption(option: string, schema: z.ZodType<string>, {private: isPrivate = false}: {private?: boolean} = {}) {
    return (given: string): string => {
        const parsed = schema.safeParse(given);
        if (!parsed.success)
            throw new InvalidOptionError(option, given, describeZodIssues(parsed.error.issues, {limit: 1})[0]!, {private: isPrivate});
        return parsed.data;
    };
}

/** "a whole number from 1 to 32768", from the schema's own bounds. */
export function describeNumberRule(schema: z.ZodNumber) {
    const kind = schema.isInt ? "a whole number" : "a number";
    const bound = (value: number | null) => value != null && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : null;
    const min = bound(schema.minValue);
    const max = bound(schema.maxValue);
    if (min != null && max != null)
        return `${kind} from ${min} to ${max}`;
    if (min != null)
        return `${kind} of at least ${min}`;
    return max != null ? `${kind} of at most ${max}` : kind;
}

/** `--gpu auto|metal|cuda|vulkan|off`, checked with the app setting's own schema. */
export function gpuOption(given: string): GpuSetting {
    const parsed = GpuSettingSchema.safeParse(given.trim());
    if (!parsed.success)
        throw new InvalidOptionError("--gpu", given, `one of ${GpuSettingSchema.options.join(", ")}`, {mustBe: true});
    return parsed.data;
}

export const gpuOptionDescription = "where the model runs: auto (a usable GPU, else the CPU), metal, cuda, vulkan, or off (the CPU); default $CLEANROOM_GPU, else auto";

/** `--allow-secret <kind>`, repeatable: a secret kind by its id or its name ("card-number", "payment card number"), gathered into a list of ids. */
export function secretKindOption(given: string, previous: SecretKindId[] = []): SecretKindId[] {
    const kind = findSecretKind(given);
    if (kind == null)
        throw new InvalidOptionError("--allow-secret", given, `one of ${secretKinds.map((entry) => entry.id).join(", ")}`, {mustBe: true});
    return [...previous, kind];
}
