/**
 * Providers' native error bodies as they arrive, after provider-wire.md (sections 1.7, 2.6, 3) and
 * bodies reported from the live APIs. Keys in them are fakes.
 */

export const openaiBodies = {
  insufficientQuota: {
    error: {
      message:
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
      type: "insufficient_quota",
      param: null,
      code: "insufficient_quota",
    },
  },
  rateLimitExceeded: {
    error: {
      message:
        "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s.",
      type: "tokens",
      param: null,
      code: "rate_limit_exceeded",
    },
  },
  invalidApiKey: {
    error: {
      message:
        "Incorrect API key provided: sk-proj-****************************************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.",
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
    },
  },
  mismatchedOrganization: {
    error: {
      message: "OpenAI-Organization header should match organization for API key",
      type: "invalid_request_error",
      param: null,
      code: "mismatched_organization",
    },
  },
  modelNotFound: {
    error: {
      message: "The model `gpt-9` does not exist or you do not have access to it.",
      type: "invalid_request_error",
      param: null,
      code: "model_not_found",
    },
  },
  contextLengthExceeded: {
    error: {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  },
  serverError: {
    error: {
      message: "The server had an error while processing your request. Sorry about that!",
      type: "server_error",
      param: null,
      code: null,
    },
  },
  engineOverloaded: {
    error: {
      message: "The engine is currently overloaded, please try again later",
      type: "server_error",
      param: null,
      code: null,
    },
  },
  responsesStreamError: {
    type: "error",
    code: "rate_limit_exceeded",
    message: "Rate limit reached for gpt-4o.",
    param: null,
    sequence_number: 3,
  },
};

export const anthropicBodies = {
  overloaded: {
    type: "error",
    error: { type: "overloaded_error", message: "Overloaded" },
    request_id: "req_011CSHoEeqs5C35K2UUqR7Fy",
  },
  rateLimit: {
    type: "error",
    error: {
      type: "rate_limit_error",
      message:
        "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
    },
    request_id: "req_011CSHoEeqs5C35K2UUqR7Fz",
  },
  authentication: {
    type: "error",
    error: { type: "authentication_error", message: "invalid x-api-key" },
    request_id: "req_1",
  },
  permission: {
    type: "error",
    error: {
      type: "permission_error",
      message: "Your API key does not have permission to use the specified resource.",
    },
    request_id: "req_2",
  },
  modelNotFound: {
    type: "error",
    error: { type: "not_found_error", message: "model: claude-9-opus" },
    request_id: "req_3",
  },
  creditBalance: {
    type: "error",
    error: {
      type: "invalid_request_error",
      message:
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
    },
    request_id: "req_4",
  },
  billing: { type: "error", error: { type: "billing_error", message: "Billing issue." }, request_id: "req_5" },
  promptTooLong: {
    type: "error",
    error: { type: "invalid_request_error", message: "prompt is too long: 213462 tokens > 200000 maximum" },
    request_id: "req_6",
  },
  requestTooLarge: {
    type: "error",
    error: { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." },
    request_id: "req_7",
  },
  apiError: { type: "error", error: { type: "api_error", message: "Internal server error" }, request_id: "req_8" },
  timeout: { type: "error", error: { type: "timeout_error", message: "Request timed out" }, request_id: "req_9" },
};

const rpc = "type.googleapis.com/google.rpc.";

export const geminiBodies = {
  perMinuteWithRetryInfo: {
    error: {
      code: 429,
      message: "You exceeded your current quota, please check your plan.",
      status: "RESOURCE_EXHAUSTED",
      details: [
        {
          "@type": `${rpc}QuotaFailure`,
          violations: [{ quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier" }],
        },
        { "@type": `${rpc}RetryInfo`, retryDelay: "34.4s" },
      ],
    },
  },
  perDay: {
    error: {
      code: 429,
      message:
        "You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_requests_per_model_per_day, limit: 0",
      status: "RESOURCE_EXHAUSTED",
      details: [
        {
          "@type": `${rpc}Help`,
          links: [{ description: "Learn more about Gemini API quotas", url: "https://ai.google.dev" }],
        },
        {
          "@type": `${rpc}QuotaFailure`,
          violations: [
            {
              quotaMetric: "generativelanguage.googleapis.com/generate_requests_per_model_per_day",
              quotaId: "GenerateRequestsPerDayPerProjectPerModel",
            },
          ],
        },
      ],
    },
  },
  quotaWithoutRateDetails: {
    error: {
      code: 429,
      message: "Quota exceeded.",
      status: "RESOURCE_EXHAUSTED",
      details: [{ "@type": `${rpc}QuotaFailure`, violations: [{ quotaId: "GenerateContentInputTokensPerProject" }] }],
    },
  },
  bareExhausted: {
    error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" },
  },
  apiKeyInvalid: {
    error: {
      code: 400,
      message: "API key not valid. Please pass a valid API key.",
      status: "INVALID_ARGUMENT",
      details: [
        {
          "@type": `${rpc}ErrorInfo`,
          reason: "API_KEY_INVALID",
          domain: "googleapis.com",
          metadata: { service: "generativelanguage.googleapis.com" },
        },
      ],
    },
  },
  permissionDenied: {
    error: {
      code: 403,
      message: "Method doesn't allow unregistered callers (callers without established identity).",
      status: "PERMISSION_DENIED",
    },
  },
  serviceDisabled: {
    error: {
      code: 403,
      message: "Generative Language API has not been used in project 123 before or it is disabled.",
      status: "PERMISSION_DENIED",
      details: [{ "@type": `${rpc}ErrorInfo`, reason: "SERVICE_DISABLED", domain: "googleapis.com" }],
    },
  },
  locationNotSupported: {
    error: { code: 400, message: "User location is not supported for the API use.", status: "FAILED_PRECONDITION" },
  },
  modelNotFound: {
    error: {
      code: 404,
      message:
        "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.",
      status: "NOT_FOUND",
    },
  },
  cachedContentNotFound: {
    error: { code: 403, message: "CachedContent not found (or permission denied)", status: "PERMISSION_DENIED" },
  },
  invalidArgument: {
    error: {
      code: 400,
      status: "INVALID_ARGUMENT",
      message: "* GenerateContentRequest.generation_config.temperature: must be less than or equal to 2.0\n",
    },
  },
  overloaded: {
    error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" },
  },
  internal: {
    error: {
      code: 500,
      message:
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
      status: "INTERNAL",
    },
  },
  deadlineExceeded: {
    error: { code: 504, message: "Deadline expired before operation could complete.", status: "DEADLINE_EXCEEDED" },
  },
};
