import * as z from "zod";

type JsonSchemaNode = {
    type?: string | string[],
    anyOf?: JsonSchemaNode[],
    oneOf?: JsonSchemaNode[],
    enum?: unknown[],
    const?: unknown,
    maxLength?: number,
    maxItems?: number,
    items?: JsonSchemaNode,
    properties?: Record<string, JsonSchemaNode>,
    additionalProperties?: boolean | JsonSchemaNode
};

/** The most UTF-8 bytes one UTF-16 unit of a string takes in JSON: `\u0000`-style escapes (controls, lone surrogates). */
const maxBytesPerStringUnit = 6;
/** The longest JSON number (`-1.7976931348623157e+308`). */
const maxNumberBytes = 24;

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/**
 * The most bytes a value `schema` accepts can take as JSON (`JSON.stringify`), read from the
 * schema's bounds (`.max()` of strings and arrays, enums, the keys of strict objects). A string
 * counts six bytes per unit, since JSON may escape every one. `Infinity` when the schema leaves
 * something unbounded (a string or array without a maximum, an object open to other keys).
 */
export function largestJsonBytes(schema: z.ZodType): number {
    return largestOf(z.toJSONSchema(schema, {io: "input", unrepresentable: "any"}) as JsonSchemaNode);
}

function largestOf(node: JsonSchemaNode): number {
    const alternatives = node.anyOf ?? node.oneOf;
    if (alternatives != null)
        return Math.max(...alternatives.map(largestOf));
    if (node.enum != null)
        return Math.max(...node.enum.map((value) => utf8Bytes(JSON.stringify(value))));
    if (node.const !== undefined)
        return utf8Bytes(JSON.stringify(node.const));

    const types = Array.isArray(node.type) ? node.type : node.type != null ? [node.type] : [];
    if (types.length !== 1)
        return types.length === 0 ? Infinity : Math.max(...types.map((type) => largestOf({...node, type})));
    switch (types[0]) {
        case "string":
            return node.maxLength == null ? Infinity : 2 + maxBytesPerStringUnit * node.maxLength;
        case "number":
        case "integer":
            return maxNumberBytes;
        case "boolean":
            return "false".length;
        case "null":
            return "null".length;
        case "array":
            return node.maxItems == null || node.items == null ? Infinity : 2 + node.maxItems * (largestOf(node.items) + 1);
        case "object": {
            if (node.additionalProperties !== false)
                return Infinity;
            const fields = Object.entries(node.properties ?? {});
            // Braces, then per field its quoted key, a colon, the value and a comma.
            return 2 + fields.reduce((sum, [key, value]) => sum + utf8Bytes(JSON.stringify(key)) + 1 + largestOf(value) + 1, 0);
        }
        default:
            return Infinity;
    }
}
