"""The hparams plugin's three summaries: the experiment, a session's start and its end.

TensorBoard's HPARAMS tab reads them from a run's directory; the metrics are ordinary
scalars logged next to them under the tags the experiment names.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

from ember.utils.tensorboard._values import as_scalar

__all__ = ["hparams"]


def _summary(tag: str, content: plugin_data_pb2.HParamsPluginData) -> Summary:
    plugin = SummaryMetadata.PluginData(
        plugin_name=metadata.PLUGIN_NAME, content=content.SerializeToString()
    )
    meta = SummaryMetadata(plugin_data=plugin)
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def _discrete(values: list[Any]) -> struct_pb2.ListValue:
    listed = struct_pb2.ListValue()
    for value in values:
        if isinstance(value, bool):
            listed.values.add().bool_value = value
        elif isinstance(value, (int, float)):
            listed.values.add().number_value = value
        else:
            listed.values.add().string_value = str(value)
    return listed


def hparams(
    hparam_dict: dict[str, Any],
    metric_dict: dict[str, Any],
    hparam_domain_discrete: dict[str, list[Any]] | None = None,
) -> tuple[Summary, Summary, Summary]:
    """(experiment, session start, session end) summaries, as torch.utils.tensorboard's."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
    domains = hparam_domain_discrete or {}
    for name, values in domains.items():
        if name not in hparam_dict or not isinstance(values, list) or not values:
            raise TypeError(
                f"add_hparams: hparam_domain_discrete[{name!r}] must be a non-empty list "
                "for a key of hparam_dict"
            )
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for name, value in hparam_dict.items():
        if value is None:
            continue
        if isinstance(value, bool):
            start.hparams[name].bool_value = value
            kind = api_pb2.DATA_TYPE_BOOL
        elif isinstance(value, (int, float)):
            start.hparams[name].number_value = value
            kind = api_pb2.DATA_TYPE_FLOAT64
        elif isinstance(value, str):
            start.hparams[name].string_value = value
            kind = api_pb2.DATA_TYPE_STRING
        else:
            start.hparams[name].number_value = as_scalar(value, "add_hparams")
            kind = api_pb2.DATA_TYPE_FLOAT64
        info = api_pb2.HParamInfo(name=name, type=kind)
        if name in domains:
            info.domain_discrete.CopyFrom(_discrete(domains[name]))
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=tag)) for tag in metric_dict]
    version = metadata.PLUGIN_DATA_VERSION
    experiment = plugin_data_pb2.HParamsPluginData(
        experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics), version=version
    )
    started = plugin_data_pb2.HParamsPluginData(session_start_info=start, version=version)
    ended = plugin_data_pb2.HParamsPluginData(
        session_end_info=plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS),
        version=version,
    )
    return (
        _summary(metadata.EXPERIMENT_TAG, experiment),
        _summary(metadata.SESSION_START_INFO_TAG, started),
        _summary(metadata.SESSION_END_INFO_TAG, ended),
    )
