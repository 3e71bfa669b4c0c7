import type {GgufFileInfo} from "node-llama-cpp";
import {ModelLoadError} from "../../common/errors.js";

/** LLAMA_MAX_LAYERS in llama.cpp's llama-hparams.h. */
const maxLayers = 512;
const maxInt32 = 2 ** 31 - 1;
const requiredWhenTensors: ReadonlyArray<[string, RegExp]> = [
    ["attention.head_count", /\.attn_(q|qkv)\.weight$/],
    ["feed_forward_length", /\.ffn_(up|gate|down)\.weight$/]
];
/**
 * Sizes that must be at least 1 when a tensor uses them (`null`: always). A model without such
 * tensors may say 0: real Mamba files have `head_count` and `feed_forward_length` 0 (no attention, no FFN).
 */
const positiveScalarKeys = new Map<string, RegExp | null>([
    ["embedding_length", null],
    ["feed_forward_length", /\.ffn_(up|gate|down)\.weight$/],
    ["attention.head_count", /\.attn_(q|k|v|qkv)\.weight$/],
    ["attention.head_count_kv", /\.attn_(q|k|v|qkv)\.weight$/]
]);

/**
 * Refuses hyperparameters that llama.cpp does not check at load time but asserts on (aborting
 * the whole process) once a token is evaluated: found by fuzzing the test model's header.
 * Only values no real model can have are refused.
 */
export function checkModelHyperparameters(fileInfo: GgufFileInfo, architecture: string, modelPath: string): void {
    // llama.cpp asserts (aborting the process) when two vocabulary entries are the same string.
    const tokens = (fileInfo.metadata as {tokenizer?: {ggml?: {tokens?: unknown}}} | undefined)?.tokenizer?.ggml?.tokens;
    if (Array.isArray(tokens) && new Set(tokens).size !== tokens.length)
        throw new ModelLoadError("MODEL_NOT_GGUF",
            `The model's vocabulary lists ${tokens.length - new Set(tokens).size} token(s) twice: the file is damaged.`,
            {path: modelPath, duplicateTokens: tokens.length - new Set(tokens).size});

    const section = (fileInfo.metadata as Record<string, unknown> | undefined)?.[architecture];
    if (section == null || typeof section !== "object")
        return;

    const refuse = (key: string, value: unknown, rule: string) => {
        const shown = /^[\x20-\x7e]{1,40}$/.test(String(value)) ? String(value) : `(unprintable ${typeof value})`;
        throw new ModelLoadError(
            "MODEL_NOT_GGUF",
            `The model's hyperparameter ${architecture}.${key} is ${shown}; it must be ${rule}. The file is damaged.`,
            {path: modelPath, key: `${architecture}.${key}`, value: shown}
        );
    };
    const tensorNames = (fileInfo.tensorInfo ?? []).map((tensor) => tensor.name);
    const has = (pattern: RegExp) => tensorNames.some((name) => pattern.test(name));
    for (const [key, value] of flatten(section as Record<string, unknown>)) {
        const values = Array.isArray(value) ? value : [value];
        // ggml asserts eps >= 0 in the norm op: a negative or NaN epsilon aborts the first evaluation.
        if (/epsilon$/.test(key))
            for (const item of values)
                if (typeof item !== "number" || !Number.isFinite(item) || item < 0)
                    refuse(key, item, "a finite number, zero or more");

        // llama.cpp asserts 0 < n_layer <= LLAMA_MAX_LAYERS while loading.
        if (key === "block_count" && (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > maxLayers))
            refuse(key, value, `a whole number from 1 to ${maxLayers}`);

        // Scalar sizes of 0, or past int32, make tensor shapes with a dimension < 1, which the loader asserts on.
        // Per-layer arrays may hold 0 for layers without that part (hybrid models), so only scalars are checked.
        const usedBy = positiveScalarKeys.get(key);
        if (usedBy !== undefined && (usedBy == null || has(usedBy)) && !Array.isArray(value) && (typeof value !== "number" || value < 1 || value > maxInt32))
            refuse(key, value, `from 1 to ${maxInt32}`);
    }

    // Absent optional sizes default to 0 in llama.cpp, which then asserts on the 0-sized tensor shape.
    const flat = new Map(flatten(section as Record<string, unknown>));
    for (const [key, pattern] of requiredWhenTensors)
        if (has(pattern) && !flat.has(key))
            refuse(key, "missing", `present, since the model has tensors matching ${pattern.source}`);

    const attention = (section as {attention?: {head_count?: unknown, head_count_kv?: unknown}}).attention;
    if (typeof attention?.head_count === "number" && typeof attention.head_count_kv === "number" && attention.head_count_kv > attention.head_count)
        refuse("attention.head_count_kv", attention.head_count_kv, `at most attention.head_count (${attention.head_count})`);
}

function* flatten(object: Record<string, unknown>, prefix = ""): Generator<[string, unknown]> {
    for (const [key, value] of Object.entries(object)) {
        if (value != null && typeof value === "object" && !Array.isArray(value))
            yield* flatten(value as Record<string, unknown>, `${prefix}${key}.`);
        else
            yield [`${prefix}${key}`, value];
    }
}
