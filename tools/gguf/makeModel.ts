import crypto from "node:crypto";
import {GgufValueType, readGgufMetadata, writeGguf, type GgufTensor, type GgufValue} from "./GgufFile.js";

/**
 * Tiny random-weight models of the architectures users load, with each architecture's real
 * tensor names and hyperparameter keys (as llama.cpp's src/models/<arch>.cpp and llama-arch.cpp
 * ask for them), and the tokenizer of a real model carried over. A few hundred kB each: they
 * prove what the engine does with each kind of memory (KV cache, sliding-window KV, recurrent
 * state), not what the model says.
 */

/** How the architecture keeps a sequence's state in llama.cpp. */
export type ModelMemoryKind = "kv" | "swa" | "hybrid" | "recurrent";

export type ModelArchitecture = {
    /** `general.architecture`. */
    name: string,
    memory: ModelMemoryKind,
    /** One line: what the generated model has. */
    description: string
};

export const modelArchitectures = {
    llama: {name: "llama", memory: "kv", description: "dense attention, RoPE"},
    qwen3: {name: "qwen3", memory: "kv", description: "dense attention, Q/K norms"},
    gemma3: {name: "gemma3", memory: "swa", description: "sliding-window attention on every other layer"},
    "gpt-oss": {name: "gpt-oss", memory: "swa", description: "sliding-window attention, attention sinks, 4 experts (2 used)"},
    lfm2: {name: "lfm2", memory: "hybrid", description: "a short-convolution (recurrent) layer, then an attention layer"},
    mamba: {name: "mamba", memory: "recurrent", description: "two Mamba (selective state space) layers, no attention"}
} as const satisfies Record<string, ModelArchitecture>;

export type ModelArchitectureName = keyof typeof modelArchitectures;

export function isModelArchitectureName(name: string): name is ModelArchitectureName {
    return Object.hasOwn(modelArchitectures, name);
}

export type MakeModelOptions = {
    /** The model whose tokenizer (every `tokenizer.*` key) is carried over. */
    tokenizerFrom: string,
    /** Trained context. Defaults to `2048`. */
    contextLength?: number,
    /** Seed of the random weights. Defaults to `1`. */
    seed?: number,
    /**
     * The sliding window of gemma3 and gpt-oss. Defaults to `32`. One at least `contextLength` makes a
     * model that node-llama-cpp reads as having no sliding window, while llama.cpp still keeps two KV caches.
     */
    slidingWindow?: number
};

const embedding = 64;
const heads = 4;
const kvHeads = 2;
const headDim = embedding / heads;
const feedForward = 128;
const layers = 2;

/** Writes a model of `architecture` to `outPath`; returns its parameter count. */
export function makeModel(outPath: string, architecture: ModelArchitectureName, {tokenizerFrom, contextLength = 2048, seed = 1, slidingWindow = 32}: MakeModelOptions): number {
    const source = readGgufMetadata(tokenizerFrom);
    const tokens = source.get("tokenizer.ggml.tokens");
    if (tokens == null || tokens.type !== GgufValueType.Array)
        throw new Error(`${tokenizerFrom} has no tokenizer.ggml.tokens`);
    const vocab = tokens.items.length;
    const name = modelArchitectures[architecture].name;

    const keys = new Map<string, GgufValue>([
        ["general.architecture", string(name)],
        ["general.name", string(`cleanroom-test-${name}`)],
        ["general.file_type", u32(0)],
        [`${name}.context_length`, u32(contextLength)],
        [`${name}.embedding_length`, u32(embedding)],
        [`${name}.block_count`, u32(layers)],
        [`${name}.attention.layer_norm_rms_epsilon`, f32(1e-5)],
        [`${name}.vocab_size`, u32(vocab)]
    ]);
    const weights = new WeightSource(seed);
    const tensors: GgufTensor[] = [weights.random("token_embd.weight", [embedding, vocab])];
    const spec = builders[architecture];
    spec({keys, tensors, weights, name, vocab, slidingWindow});
    for (const [key, value] of source)
        if (key.startsWith("tokenizer."))
            keys.set(key, value);

    writeGguf(outPath, keys, tensors);
    return tensors.reduce((sum, tensor) => sum + tensor.dims.reduce((a, b) => a * b, 1), 0);
}

type Build = {keys: Map<string, GgufValue>, tensors: GgufTensor[], weights: WeightSource, name: string, vocab: number, slidingWindow: number};

/** `headLengths`: the head width is stated (`key_length`, `value_length`), as Qwen3, Gemma 3 and gpt-oss files do. */
function attentionKeys({keys, name}: Build, kvHeadCount: GgufValue = u32(kvHeads), headLengths = false) {
    if (headLengths) {
        keys.set(`${name}.attention.key_length`, u32(headDim));
        keys.set(`${name}.attention.value_length`, u32(headDim));
    }
    keys.set(`${name}.feed_forward_length`, u32(feedForward));
    keys.set(`${name}.attention.head_count`, u32(heads));
    keys.set(`${name}.attention.head_count_kv`, kvHeadCount);
    keys.set(`${name}.rope.dimension_count`, u32(headDim));
    keys.set(`${name}.rope.freq_base`, f32(10000));
}

/** attn_q/k/v/output of one layer: `qWidth` query features, `kvWidth` key and value features. */
function attention({tensors, weights}: Build, layer: number, qWidth = heads * headDim, kvWidth = kvHeads * headDim) {
    tensors.push(
        weights.random(`blk.${layer}.attn_q.weight`, [embedding, qWidth]),
        weights.random(`blk.${layer}.attn_k.weight`, [embedding, kvWidth]),
        weights.random(`blk.${layer}.attn_v.weight`, [embedding, kvWidth]),
        weights.random(`blk.${layer}.attn_output.weight`, [qWidth, embedding])
    );
}

function denseFeedForward({tensors, weights}: Build, layer: number) {
    tensors.push(
        weights.ones(`blk.${layer}.ffn_norm.weight`, [embedding]),
        weights.random(`blk.${layer}.ffn_gate.weight`, [embedding, feedForward]),
        weights.random(`blk.${layer}.ffn_up.weight`, [embedding, feedForward]),
        weights.random(`blk.${layer}.ffn_down.weight`, [feedForward, embedding])
    );
}

function output(build: Build, normName = "output_norm.weight") {
    build.tensors.push(build.weights.ones(normName, [embedding]), build.weights.random("output.weight", [embedding, build.vocab]));
}

const builders: Record<ModelArchitectureName, (build: Build) => void> = {
    llama(build) {
        attentionKeys(build);
        output(build);
        for (let layer = 0; layer < layers; layer++) {
            build.tensors.push(build.weights.ones(`blk.${layer}.attn_norm.weight`, [embedding]));
            attention(build, layer);
            denseFeedForward(build, layer);
        }
    },
    qwen3(build) {
        attentionKeys(build, u32(kvHeads), true);
        output(build);
        for (let layer = 0; layer < layers; layer++) {
            build.tensors.push(
                build.weights.ones(`blk.${layer}.attn_norm.weight`, [embedding]),
                build.weights.ones(`blk.${layer}.attn_q_norm.weight`, [headDim]),
                build.weights.ones(`blk.${layer}.attn_k_norm.weight`, [headDim])
            );
            attention(build, layer);
            denseFeedForward(build, layer);
        }
    },
    gemma3(build) {
        attentionKeys(build, u32(kvHeads), true);
        build.keys.set(`${build.name}.attention.sliding_window`, u32(build.slidingWindow));
        // Layer il is sliding-window when il % pattern < pattern - 1: layer 0 windowed, layer 1 global.
        build.keys.set(`${build.name}.attention.sliding_window_pattern`, u32(2));
        build.keys.set(`${build.name}.rope.local.freq_base`, f32(10000));
        output(build);
        for (let layer = 0; layer < layers; layer++) {
            build.tensors.push(
                build.weights.ones(`blk.${layer}.attn_norm.weight`, [embedding]),
                build.weights.ones(`blk.${layer}.attn_q_norm.weight`, [headDim]),
                build.weights.ones(`blk.${layer}.attn_k_norm.weight`, [headDim]),
                build.weights.ones(`blk.${layer}.post_attention_norm.weight`, [embedding]),
                build.weights.ones(`blk.${layer}.post_ffw_norm.weight`, [embedding])
            );
            attention(build, layer);
            denseFeedForward(build, layer);
        }
    },
    "gpt-oss"(build) {
        const experts = 4;
        const expertFeedForward = 64;
        attentionKeys(build, u32(kvHeads), true);
        build.keys.set(`${build.name}.attention.sliding_window`, u32(build.slidingWindow));
        build.keys.set(`${build.name}.expert_count`, u32(experts));
        build.keys.set(`${build.name}.expert_used_count`, u32(2));
        build.keys.set(`${build.name}.expert_feed_forward_length`, u32(expertFeedForward));
        output(build);
        const {tensors, weights} = build;
        for (let layer = 0; layer < layers; layer++) {
            tensors.push(
                weights.ones(`blk.${layer}.attn_norm.weight`, [embedding]),
                weights.ones(`blk.${layer}.post_attention_norm.weight`, [embedding]),
                weights.random(`blk.${layer}.attn_output.bias`, [embedding]),
                weights.random(`blk.${layer}.attn_sinks.weight`, [heads]),
                weights.random(`blk.${layer}.ffn_gate_inp.weight`, [embedding, experts]),
                weights.random(`blk.${layer}.ffn_gate_inp.bias`, [experts]),
                weights.random(`blk.${layer}.ffn_gate_exps.weight`, [embedding, expertFeedForward, experts]),
                weights.random(`blk.${layer}.ffn_gate_exps.bias`, [expertFeedForward, experts]),
                weights.random(`blk.${layer}.ffn_up_exps.weight`, [embedding, expertFeedForward, experts]),
                weights.random(`blk.${layer}.ffn_up_exps.bias`, [expertFeedForward, experts]),
                weights.random(`blk.${layer}.ffn_down_exps.weight`, [expertFeedForward, embedding, experts]),
                weights.random(`blk.${layer}.ffn_down_exps.bias`, [embedding, experts])
            );
            attention(build, layer);
        }
    },
    lfm2(build) {
        const convCache = 3;
        // A layer without KV heads is a short-convolution layer (recurrent state), the others attention.
        attentionKeys(build, {type: GgufValueType.Array, itemType: GgufValueType.U32, items: [0, kvHeads]});
        build.keys.set(`${build.name}.shortconv.l_cache`, u32(convCache));
        output(build, "token_embd_norm.weight");
        const {tensors, weights} = build;
        tensors.push(
            weights.ones("blk.0.attn_norm.weight", [embedding]),
            weights.random("blk.0.shortconv.conv.weight", [convCache, embedding]),
            weights.random("blk.0.shortconv.in_proj.weight", [embedding, 3 * embedding]),
            weights.random("blk.0.shortconv.out_proj.weight", [embedding, embedding]),
            weights.ones("blk.1.attn_norm.weight", [embedding]),
            weights.ones("blk.1.attn_q_norm.weight", [headDim]),
            weights.ones("blk.1.attn_k_norm.weight", [headDim])
        );
        denseFeedForward(build, 0);
        attention(build, 1, embedding);
        denseFeedForward(build, 1);
    },
    mamba(build) {
        const inner = 2 * embedding;
        const stateSize = 16;
        const timeStepRank = 4;
        const convKernel = 4;
        build.keys.set(`${build.name}.feed_forward_length`, u32(0));
        build.keys.set(`${build.name}.attention.head_count`, u32(0));
        build.keys.set(`${build.name}.ssm.conv_kernel`, u32(convKernel));
        build.keys.set(`${build.name}.ssm.inner_size`, u32(inner));
        build.keys.set(`${build.name}.ssm.state_size`, u32(stateSize));
        build.keys.set(`${build.name}.ssm.time_step_rank`, u32(timeStepRank));
        output(build);
        const {tensors, weights} = build;
        for (let layer = 0; layer < layers; layer++)
            tensors.push(
                weights.ones(`blk.${layer}.attn_norm.weight`, [embedding]),
                weights.random(`blk.${layer}.ssm_in.weight`, [embedding, 2 * inner]),
                weights.random(`blk.${layer}.ssm_conv1d.weight`, [convKernel, inner]),
                weights.random(`blk.${layer}.ssm_conv1d.bias`, [inner]),
                weights.random(`blk.${layer}.ssm_x.weight`, [inner, timeStepRank + 2 * stateSize]),
                weights.random(`blk.${layer}.ssm_dt.weight`, [timeStepRank, inner]),
                weights.random(`blk.${layer}.ssm_dt.bias`, [inner]),
                weights.constant(`blk.${layer}.ssm_a`, [stateSize, inner], -1), // A = -exp(A_log): negative, or the state grows without bound
                weights.ones(`blk.${layer}.ssm_d`, [inner]),
                weights.random(`blk.${layer}.ssm_out.weight`, [inner, embedding])
            );
    }
};

/** F32 tensors: random values uniform in ±0.1 from a seeded generator, or constants. */
class WeightSource {
    private _state: number;

    public constructor(seed: number) {
        this._state = crypto.createHash("sha256").update(String(seed)).digest().readUInt32LE(0) || 1;
    }

    public random(name: string, dims: number[]): GgufTensor {
        const count = dims.reduce((a, b) => a * b, 1);
        const data = Buffer.alloc(count * 4);
        for (let index = 0; index < count; index++)
            data.writeFloatLE((this._next() - 0.5) * 0.2, index * 4);
        return {name, dims, ggmlType: 0, data};
    }

    public ones(name: string, dims: number[]): GgufTensor {
        return this.constant(name, dims, 1);
    }

    public constant(name: string, dims: number[], value: number): GgufTensor {
        const count = dims.reduce((a, b) => a * b, 1);
        const data = Buffer.alloc(count * 4);
        for (let index = 0; index < count; index++)
            data.writeFloatLE(value, index * 4);
        return {name, dims, ggmlType: 0, data};
    }

    private _next() {
        this._state ^= this._state << 13;
        this._state ^= this._state >>> 17;
        this._state ^= this._state << 5;
        return (this._state >>> 0) / 2 ** 32;
    }
}

function u32(value: number): GgufValue {
    return {type: GgufValueType.U32, value};
}

function f32(value: number): GgufValue {
    return {type: GgufValueType.F32, value};
}

function string(value: string): GgufValue {
    return {type: GgufValueType.String, value};
}
