import crypto from "node:crypto";
import {GgufValueType, readGgufMetadata, writeGguf, type GgufTensor, type GgufValue} from "./GgufFile.js";

export type SyntheticLlamaOptions = {
    /** The model whose tokenizer (every `tokenizer.*` key) is carried over. */
    tokenizerFrom: string,
    embedding: number,
    layers: number,
    heads: number,
    kvHeads: number,
    feedForward: number,
    contextLength: number,
    seed?: number
};

/**
 * Writes a Llama-architecture GGUF with random F16 weights and a real tokenizer: the per-token
 * cost of a real model of that shape, for benchmarks that should not only measure a 1 MB model.
 * Returns the parameter count.
 */
export function makeSyntheticLlama(outPath: string, options: SyntheticLlamaOptions): number {
    const source = readGgufMetadata(options.tokenizerFrom);
    const tokens = source.get("tokenizer.ggml.tokens");
    if (tokens == null || tokens.type !== GgufValueType.Array)
        throw new Error(`${options.tokenizerFrom} has no tokenizer.ggml.tokens`);
    const vocab = tokens.items.length;
    const {embedding, layers, heads, kvHeads, feedForward} = options;
    if (embedding % heads !== 0 || heads % kvHeads !== 0)
        throw new Error("embedding must divide by heads, and heads by kvHeads");
    const kvEmbedding = (embedding / heads) * kvHeads;

    const u32 = (value: number): GgufValue => ({type: GgufValueType.U32, value});
    const metadata = new Map<string, GgufValue>([
        ["general.architecture", {type: GgufValueType.String, value: "llama"}],
        ["general.name", {type: GgufValueType.String, value: `cleanroom-synthetic-${embedding}x${layers}`}],
        ["general.file_type", u32(1)],
        ["llama.context_length", u32(options.contextLength)],
        ["llama.embedding_length", u32(embedding)],
        ["llama.block_count", u32(layers)],
        ["llama.feed_forward_length", u32(feedForward)],
        ["llama.attention.head_count", u32(heads)],
        ["llama.attention.head_count_kv", u32(kvHeads)],
        ["llama.rope.dimension_count", u32(embedding / heads)],
        ["llama.attention.layer_norm_rms_epsilon", {type: GgufValueType.F32, value: 1e-5}],
        ["llama.vocab_size", u32(vocab)]
    ]);
    for (const [key, value] of source)
        if (key.startsWith("tokenizer."))
            metadata.set(key, value);

    const random = f16Source(options.seed ?? 1);
    const f16 = (name: string, dims: number[]): GgufTensor => ({name, dims, ggmlType: 1, data: random(dims.reduce((a, b) => a * b, 1))});
    const ones = (name: string, size: number): GgufTensor => {
        const data = Buffer.alloc(size * 4);
        for (let index = 0; index < size; index++)
            data.writeFloatLE(1, index * 4);
        return {name, dims: [size], ggmlType: 0, data};
    };

    const tensors: GgufTensor[] = [f16("token_embd.weight", [embedding, vocab]), ones("output_norm.weight", embedding), f16("output.weight", [embedding, vocab])];
    for (let layer = 0; layer < layers; layer++)
        tensors.push(
            ones(`blk.${layer}.attn_norm.weight`, embedding),
            f16(`blk.${layer}.attn_q.weight`, [embedding, embedding]),
            f16(`blk.${layer}.attn_k.weight`, [embedding, kvEmbedding]),
            f16(`blk.${layer}.attn_v.weight`, [embedding, kvEmbedding]),
            f16(`blk.${layer}.attn_output.weight`, [embedding, embedding]),
            ones(`blk.${layer}.ffn_norm.weight`, embedding),
            f16(`blk.${layer}.ffn_gate.weight`, [embedding, feedForward]),
            f16(`blk.${layer}.ffn_up.weight`, [embedding, feedForward]),
            f16(`blk.${layer}.ffn_down.weight`, [feedForward, embedding])
        );
    writeGguf(outPath, metadata, tensors);
    return tensors.reduce((sum, tensor) => sum + tensor.dims.reduce((a, b) => a * b, 1), 0);
}

/** Random F16 values, uniform in about ±0.05, tiled from a seeded table (fast for hundreds of MB). */
function f16Source(seed: number) {
    const table = Buffer.alloc(1 << 17);
    const bytes = crypto.createHash("sha256").update(String(seed)).digest();
    let state = bytes.readUInt32LE(0) || 1;
    const next = () => {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        return (state >>> 0) / 2 ** 32;
    };
    for (let index = 0; index < table.length / 2; index++)
        table.writeUInt16LE(toHalf((next() - 0.5) * 0.1), index * 2);
    return (count: number) => {
        const data = Buffer.alloc(count * 2);
        for (let offset = 0; offset < data.length; offset += table.length) {
            const start = Math.floor(next() * (table.length / 2)) * 2;
            const rotated = Buffer.concat([table.subarray(start), table.subarray(0, start)]);
            rotated.copy(data, offset, 0, Math.min(rotated.length, data.length - offset));
        }
        return data;
    };
}

function toHalf(value: number) {
    const floats = new Float32Array([value]);
    const bits = new Uint32Array(floats.buffer)[0]!;
    const sign = (bits >>> 16) & 0x8000;
    const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
    const mantissa = (bits >>> 13) & 0x3ff;
    if (exponent <= 0)
        return sign;
    if (exponent >= 31)
        return sign | 0x7c00;
    return sign | (exponent << 10) | mantissa;
}
