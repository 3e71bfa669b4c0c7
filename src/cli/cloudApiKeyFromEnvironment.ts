/** The CLI's cloud key: CLEANROOM_CLOUD_API_KEY. Never logged, never stored. */
export function cloudApiKeyFromEnvironment(): string | null {
    const key = process.env.CLEANROOM_CLOUD_API_KEY;
    return key == null || key === "" ? null : key;
}
