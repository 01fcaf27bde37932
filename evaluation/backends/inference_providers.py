"""Hugging Face Inference Providers by model id (and optionally provider), through
``huggingface_hub.AsyncInferenceClient``: chat prompts via ``chat_completion`` (with provider ``auto`` the
Hugging Face router picks the provider server-side), raw prompts via ``text_generation``.

The key is ``--api-key`` or ``HF_TOKEN``; it travels only in the Authorization header.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends._common import one_line
from scrambled_bench.evaluation.backends.base import (
    BackendConfig,
    Generation,
    GenerationRequest,
    backend_option,
)
from scrambled_bench.evaluation.backends.decoding import text_generation_parameters
from scrambled_bench.evaluation.backends.tgi import InferenceClientBackend, install_async_client
from scrambled_bench.redaction import redact


class InferenceProvidersConfig(BackendConfig):
    model: str = backend_option(..., "a Hub model id, e.g. meta-llama/Llama-3.1-8B-Instruct", identity=True, flag=True)  # fmt: skip
    provider: str | None = backend_option(None, "an Inference Provider (together, novita...; default auto)", identity=True, flag=True)  # fmt: skip
    api_key: str | None = backend_option(None, "a Hugging Face token (default: HF_TOKEN); never written anywhere", identity=False, flag=True, secret=True)  # fmt: skip


class InferenceProvidersBackend(InferenceClientBackend):
    """``model`` is a Hub model id (``meta-llama/Llama-3.1-8B-Instruct``); ``provider`` a provider name
    (``together``, ``novita``...) or ``None`` for ``auto``."""

    kind = "hf"
    description = "Hugging Face Inference Providers by model id (--provider, default auto); key from HF_TOKEN or --api-key"
    Config = InferenceProvidersConfig
    #: the model and the provider asked for ("auto": the router picks one per request)
    endpoint_fields = ("backend", "model", "provider")

    def __init__(self, config: InferenceProvidersConfig):
        super().__init__(config.model)
        from huggingface_hub import AsyncInferenceClient

        self.provider = config.provider or "auto"
        self._api_key = config.api_key or os.environ.get("HF_TOKEN")
        self.transport = install_async_client()
        self._client = AsyncInferenceClient(
            provider=self.provider, api_key=self._api_key, timeout=config.request_timeout
        )

    async def health_check(self) -> dict[str, Any]:
        if not self._api_key:
            raise ScrambledBenchError(
                "Inference Providers need a Hugging Face token: set HF_TOKEN or pass --api-key"
            )
        mapping = await asyncio.to_thread(self._provider_mapping)
        served_by = sorted(mapping)
        if not served_by:
            raise ScrambledBenchError(f"no Inference Provider serves {self.model!r}")
        if self.provider != "auto" and self.provider not in mapping:
            raise ScrambledBenchError(
                f"provider {self.provider!r} does not serve {self.model!r}; served by: {', '.join(served_by)}"
            )
        return {"backend": self.kind, "model": self.model, "provider": self.provider, "providers": mapping}

    def _provider_mapping(self) -> dict[str, dict[str, Any]]:
        """Provider -> {provider_id, status, task} from the Hub's model info (one Hub call)."""
        from huggingface_hub import HfApi
        from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError

        try:
            info = HfApi(token=self._api_key).model_info(self.model, expand=["inferenceProviderMapping"])
        except RepositoryNotFoundError:
            raise ScrambledBenchError(f"model {self.model!r} not found on the Hugging Face Hub") from None
        except OfflineModeIsEnabled:
            raise ScrambledBenchError(
                f"cannot look up {self.model!r} on the Hugging Face Hub: HF_HUB_OFFLINE=1 is set"
            ) from None
        except Exception as exc:  # noqa: BLE001 - network, auth...: one line for the user
            message = redact(one_line(f"{exc.__class__.__name__}: {exc}", 200), self._secrets())
            raise ScrambledBenchError(
                f"cannot look up {self.model!r} on the Hugging Face Hub ({message})"
            ) from None
        return {
            entry.provider: {"provider_id": entry.provider_id, "status": entry.status, "task": entry.task}
            for entry in (info.inference_provider_mapping or [])
        }

    async def _complete(self, request: GenerationRequest) -> Generation:
        text = await self._client.text_generation(
            request.prompt, model=self.model, **text_generation_parameters(request.settings)
        )
        return Generation(text=text if isinstance(text, str) else getattr(text, "generated_text", "") or "")
