"""The rule catalogue: one module per rule, in code order."""

from typing import Dict, Tuple

from ..rule import Rule
from .htp101_unpooled_call_in_loop import RULE as _HTP101
from .htp102_unpooled_call_in_hot_function import RULE as _HTP102
from .htp103_client_created_in_loop import RULE as _HTP103
from .htp104_client_per_request import RULE as _HTP104
from .htp201_unstreamed_download import RULE as _HTP201
from .htp202_stream_api_without_stream import RULE as _HTP202
from .htp203_streamed_response_not_closed import RULE as _HTP203
from .htp301_pool_smaller_than_workers import RULE as _HTP301
from .htp401_gevent_with_pyopenssl import RULE as _HTP401
from .htp402_late_monkey_patch import RULE as _HTP402
from .htp403_blocking_http_in_async import RULE as _HTP403

ALL_RULES: Tuple[Rule, ...] = (_HTP101, _HTP102, _HTP103, _HTP104, _HTP201, _HTP202, _HTP203, _HTP301, _HTP401, _HTP402, _HTP403)
RULES_BY_CODE: Dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
