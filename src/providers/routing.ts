/** Where a model id goes: which provider adapter, and the model id that provider knows it by. */
export interface ModelRoute {
  provider: string;
  providerModel: string;
}

const BEDROCK_MODEL_ARN = /^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]+:\d{0,12}:[a-z-]+\/.+$/;

/**
 * Maps the service's model ids to providers. Provider-qualified resource names (Bedrock model
 * ARNs) are routed by their form, when a provider that takes them is configured.
 */
export class ModelRouter {
  constructor(
    private readonly table: ReadonlyMap<string, ModelRoute>,
    private readonly arnProvider: string | null = null,
  ) {}

  resolve(model: string): ModelRoute | undefined {
    const route = this.table.get(model);
    if (route) return route;
    if (this.arnProvider && BEDROCK_MODEL_ARN.test(model)) {
      return { provider: this.arnProvider, providerModel: model };
    }
    return undefined;
  }

  knownModels(): string[] {
    return [...this.table.keys()].sort();
  }
}
