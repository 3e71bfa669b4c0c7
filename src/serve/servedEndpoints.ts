import type {Hono} from "hono";

/**
 * The endpoints an app serves, read from its route table (`METHOD /path`, in the order they were
 * registered): what the startup line, the app's panel and the docs test list, so none can name an
 * endpoint the server does not have or miss one it has. Middleware (`ALL` routes) is not an endpoint.
 */
export function servedEndpoints(app: Pick<Hono, "routes">): string[] {
    const endpoints = app.routes.filter((route) => route.method !== "ALL").map((route) => `${route.method} ${route.path}`);
    return [...new Set(endpoints)];
}
