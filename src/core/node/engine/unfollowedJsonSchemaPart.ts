/** The JSON Schema keywords node-llama-cpp's JSON-schema grammar follows (`GbnfJsonSchema`), and those that change nothing in a reply. */
const followedKeywords = new Set([
    "type", "const", "enum", "oneOf", "properties", "additionalProperties", "minProperties", "maxProperties", "required",
    "items", "prefixItems", "minItems", "maxItems", "format", "minLength", "maxLength", "$defs", "$ref",
    "description", "title", "default", "examples", "$schema", "$id"
]);
const followedTypes = new Set(["string", "number", "integer", "boolean", "null", "object", "array"]);
const followedFormats = new Set(["date-time", "time", "date"]);

/**
 * The first part of a JSON schema that node-llama-cpp's grammar would not follow, said as a sentence
 * (`schema.properties.code.pattern: "pattern" is not followed…`); null when it follows all of it. The
 * grammar itself never refuses: it reads an unknown type as `null` and drops an unknown keyword, so a
 * reply would look valid while ignoring what was asked.
 */
export function unfollowedJsonSchemaPart(schema: unknown): string | null {
    const defs = new Set<string>();
    return check(schema, "schema", defs);
}

function check(schema: unknown, path: string, defs: Set<string>): string | null {
    if (typeof schema !== "object" || schema == null || Array.isArray(schema))
        return `${path}: a schema must be an object`;
    const record = schema as Record<string, unknown>;
    const unknown = Object.keys(record).find((key) => !followedKeywords.has(key));
    if (unknown != null)
        return `${path}.${unknown}: ${JSON.stringify(unknown)} is not followed by the JSON grammar (it follows ${[...followedKeywords].slice(0, 18).join(", ")})`;

    if (isRecord(record.$defs))
        for (const name of Object.keys(record.$defs))
            defs.add(name);
    const types = record.type == null ? [] : Array.isArray(record.type) ? record.type : [record.type];
    const badType = types.find((type) => typeof type !== "string" || !followedTypes.has(type));
    if (badType !== undefined)
        return `${path}.type: ${JSON.stringify(badType)} is not a type the JSON grammar knows (${[...followedTypes].join(", ")})`;
    if (record.format != null && (typeof record.format !== "string" || !followedFormats.has(record.format)))
        return `${path}.format: ${JSON.stringify(record.format)} is not followed (only ${[...followedFormats].join(", ")})`;
    if (record.$ref != null) {
        const name = typeof record.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(record.$ref)?.[1] : undefined;
        if (name == null || !defs.has(name))
            return `${path}.$ref: ${JSON.stringify(record.$ref)} does not name a schema of $defs (#/$defs/<name>)`;
    }

    const children: Array<[string, unknown]> = [
        ...entriesOf(record.$defs).map(([name, child]): [string, unknown] => [`${path}.$defs.${name}`, child]),
        ...entriesOf(record.properties).map(([name, child]): [string, unknown] => [`${path}.properties.${name}`, child]),
        ...(isRecord(record.additionalProperties) ? [[`${path}.additionalProperties`, record.additionalProperties] as [string, unknown]] : []),
        ...(record.items != null ? [[`${path}.items`, record.items] as [string, unknown]] : []),
        ...listOf(record.prefixItems).map((child, index): [string, unknown] => [`${path}.prefixItems.${index}`, child]),
        ...listOf(record.oneOf).map((child, index): [string, unknown] => [`${path}.oneOf.${index}`, child])
    ];
    for (const [childPath, child] of children) {
        const problem = check(child, childPath, defs);
        if (problem != null)
            return problem;
    }
    return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value != null && !Array.isArray(value);
}

function entriesOf(value: unknown): Array<[string, unknown]> {
    return isRecord(value) ? Object.entries(value) : [];
}

function listOf(value: unknown): unknown[] {
    return Array.isArray(value) ? value : [];
}
