/** An on/off control exposed as role="switch" with its label as the accessible name. */
export function Switch({label, checked, onChange, disabled, description}: {
    label: string, checked: boolean, onChange: (checked: boolean) => void, disabled?: boolean, description?: string
}) {
    return (
        <div className="switch-row">
            <div className="switch-text">
                <span className="switch-label" aria-hidden="true">{label}</span>
                {description != null && <span className="switch-description">{description}</span>}
            </div>
            <button type="button" role="switch" aria-checked={checked} aria-label={label} disabled={disabled}
                className="switch" onClick={() => onChange(!checked)}>
                <span className="switch-thumb" />
            </button>
        </div>
    );
}
