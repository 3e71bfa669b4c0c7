// Folders name the runtime; this rule checks that each import stays within what that runtime
// may use (VS Code's code-layering idea, for Cleanroom's folders). Configured in eslint.config.js.
import {builtinModules} from "node:module";
import path from "node:path";

const repoRoot = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const nodeBuiltins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

/** The layer a file belongs to: the first configured folder that contains it, or null (tests, tools, configs). */
function layerOf(file, layers) {
    const relative = path.relative(repoRoot, file).split(path.sep).join("/");
    for (const [name, layer] of Object.entries(layers))
        if (layer.folders.some((folder) => relative.startsWith(folder)))
            return name;
    return null;
}

function packageName(specifier) {
    if (specifier.startsWith("node:"))
        return specifier;
    const parts = specifier.split("/");
    return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

export const layeringRule = {
    meta: {
        type: "problem",
        docs: {description: "Each folder imports only from the layers and packages its runtime allows"},
        schema: [{type: "object", additionalProperties: {type: "object"}}],
        messages: {
            layer: "{{from}} code may not import {{to}} code ({{specifier}}); {{from}} may import: {{allowed}}.",
            package: "{{from}} code may not import the package \"{{name}}\" ({{why}})."
        }
    },
    create(context) {
        const layers = context.options[0] ?? {};
        const file = context.filename;
        const from = layerOf(file, layers);
        if (from == null)
            return {};

        const rules = layers[from];
        const check = (node, specifier) => {
            if (typeof specifier !== "string")
                return;
            if (specifier.startsWith(".")) {
                const target = layerOf(path.resolve(path.dirname(file), specifier), layers);
                if (target != null && target !== from && !(rules.imports ?? []).includes(target))
                    context.report({node, messageId: "layer", data: {from, to: target, specifier, allowed: (rules.imports ?? []).join(", ") || "nothing"}});
                return;
            }
            const name = packageName(specifier);
            if (rules.noNodeBuiltins === true && nodeBuiltins.has(name))
                context.report({node, messageId: "package", data: {from, name, why: "Node built-ins do not exist where this layer runs"}});
            else if ((rules.deniedPackages ?? []).includes(name))
                context.report({node, messageId: "package", data: {from, name, why: "its runtime does not belong to this layer"}});
        };
        return {
            ImportDeclaration: (node) => check(node, node.source.value),
            ExportNamedDeclaration: (node) => node.source != null && check(node, node.source.value),
            ExportAllDeclaration: (node) => check(node, node.source.value),
            ImportExpression: (node) => node.source.type === "Literal" && check(node, node.source.value)
        };
    }
};

export default {rules: {layering: layeringRule}};
